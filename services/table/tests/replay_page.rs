//! Support's replay page in headless Chromium, driven over WebDriver (`chromedriver`; a small
//! HTTP+JSON client, `common::http`), against the real table service on the test infrastructure:
//! a hand is played to its end with a penalised move in it, support pastes a token into the page,
//! enters the table and hand, jumps to the penalty and reads what the page shows (the told line
//! with the rule and points, a rack, the pile count), all equal to what the engine makes of the
//! stored hand; the arrow keys step; the link in the address bar carries table, hand and step and
//! no token, opens at that step, and without a token in the tab asks for one and reads nothing.
//! A screenshot is kept under `$CARGO_TARGET_DIR/artifacts/` (or `target/artifacts/`).
//!
//! Needs `chromium` and `chromedriver` on PATH (`.ci/run` installs Debian's): without them the
//! test skips with a message, unless `OKEY_TEST_REQUIRE_INFRA=1`, where it fails.

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use okey_bots::{Bot, Level};
use okey_platform::testing::{REQUIRE_INFRA_VAR, TestInfra};
use okey_proto::v1 as pb;
use okey_rules::{Event, Hand};
use serde_json::{Value, json};
use table::domain::TableEvent;
use table::domain::history;
use table::grpc::command_to_proto;

/// How long any one thing the page does may take (Chromium starts slowly on a busy machine).
const DEADLINE: Duration = Duration::from_secs(60);

/// A program on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Chromium and chromedriver, or `None` (the test skips) when either is missing and
/// `OKEY_TEST_REQUIRE_INFRA` is not `1`.
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium = on_path("chromium").or_else(|| on_path("chromium-browser"));
    let driver = on_path("chromedriver");
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ => {
            let message = "chromium and chromedriver are not both on PATH (Debian: `apt-get install -y chromium chromium-driver`; `.ci/run` installs them)";
            if std::env::var(REQUIRE_INFRA_VAR).is_ok_and(|v| v == "1") {
                panic!("{message}");
            }
            eprintln!("skipped: {message}");
            None
        }
    }
}

/// A chromedriver process (killed when dropped) and one browser session in it.
struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Drop for Browser {
    /// Ends the session (chromedriver closes Chromium) with a blocking call, also when the test
    /// panicked, then stops chromedriver.
    fn drop(&mut self) {
        use std::io::{Read, Write};
        if !self.session.is_empty()
            && let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port))
        {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
            let _ = write!(
                stream,
                "DELETE /session/{} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                self.session, self.port
            );
            let _ = stream.read_to_end(&mut Vec::new());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Browser {
    /// Starts chromedriver on a port it picks (read from what it prints) and a headless
    /// Chromium session.
    async fn start(chromium: &PathBuf, chromedriver: &PathBuf) -> Browser {
        let mut driver = Process::new(chromedriver)
            .arg("--port=0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let stdout = driver.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                const SAID: &str = "started successfully on port ";
                if let Some(at) = line.find(SAID) {
                    let digits: String = line[at + SAID.len()..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    let _ = tx.send(digits.parse::<u16>().ok());
                }
            }
        });
        let port = rx
            .recv_timeout(DEADLINE)
            .ok()
            .flatten()
            .expect("chromedriver says its port");
        let mut browser = Browser {
            driver,
            port,
            session: String::new(),
        };
        let started = browser
            .call(
                "POST",
                "/session",
                Some(&json!({"capabilities": {"alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                                 "--disable-dev-shm-usage", "--window-size=1280,1600"],
                    },
                }}})),
            )
            .await;
        browser.session = started["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {started}"))
            .to_owned();
        browser
    }

    /// One WebDriver command; its `value`.
    async fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let answer = http(self.port, method, path, &[], body).await;
        let value = answer.json()["value"].clone();
        assert_eq!(answer.status, 200, "WebDriver {method} {path}: {value}");
        value
    }

    async fn session_call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
            .await
    }

    async fn open(&self, url: &str) {
        self.session_call("POST", "/url", Some(&json!({ "url": url })))
            .await;
    }

    /// Runs `script` in the page; what it returns.
    async fn script(&self, script: &str) -> Value {
        self.session_call(
            "POST",
            "/execute/sync",
            Some(&json!({"script": script, "args": []})),
        )
        .await
    }

    /// Waits until `script` returns something true-ish (not null, false or ""), and returns it.
    async fn wait_for(&self, what: &str, script: &str) -> Value {
        let started = Instant::now();
        loop {
            let value = self.script(script).await;
            let truthy =
                !matches!(&value, Value::Null | Value::Bool(false)) && value.as_str() != Some("");
            if truthy {
                return value;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "the page never showed {what} (`{script}` is {value}); page text: {}",
                self.script("return document.body.innerText").await
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The element `css` selects (waiting for it to be there).
    async fn element(&self, css: &str) -> String {
        self.wait_for(
            css,
            &format!("return document.querySelector({css:?}) !== null"),
        )
        .await;
        let found = self
            .session_call(
                "POST",
                "/element",
                Some(&json!({"using": "css selector", "value": css})),
            )
            .await;
        found
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {found}"))
            .to_owned()
    }

    /// The text `css` shows, as the browser renders it.
    async fn text(&self, css: &str) -> String {
        let element = self.element(css).await;
        self.session_call("GET", &format!("/element/{element}/text"), None)
            .await
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Types `text` into the field `css`, emptied first.
    async fn type_into(&self, css: &str, text: &str) {
        let element = self.element(css).await;
        self.session_call(
            "POST",
            &format!("/element/{element}/clear"),
            Some(&json!({})),
        )
        .await;
        self.session_call(
            "POST",
            &format!("/element/{element}/value"),
            Some(&json!({ "text": text })),
        )
        .await;
    }

    async fn click(&self, css: &str) {
        let element = self.element(css).await;
        self.session_call(
            "POST",
            &format!("/element/{element}/click"),
            Some(&json!({})),
        )
        .await;
    }

    /// Presses one key (a WebDriver key code) on the page.
    async fn press(&self, key: &str) {
        self.session_call(
            "POST",
            "/actions",
            Some(
                &json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
                {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]}),
            ),
        )
        .await;
    }

    async fn screenshot(&self, path: &PathBuf) {
        let png = self.session_call("GET", "/screenshot", None).await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

const ARROW_RIGHT: &str = "\u{E014}";
const ARROW_LEFT: &str = "\u{E012}";

/// Whether `command` is a discard.
fn is_discard(command: &pb::Command) -> bool {
    matches!(command.command, Some(pb::command::Command::Discard(_)))
}

/// Plays the match with strong bots on each seat's own view, except that the first seat
/// offered a move with a penalty (ListLegalActions) takes it once, a discard if one is offered;
/// if its turn goes on, it discards without a penalty. Returns the hand the penalty was taken
/// in, once that hand has ended.
async fn play_with_a_penalty(table: &str, clients: &mut [Client]) -> u32 {
    let mut bots: Vec<Box<dyn Bot>> = (0..4).map(|_| Level::Strong.bot()).collect();
    let mut hand = 0;
    let mut penalised: Option<(u32, usize)> = None;
    for _ in 0..5_000 {
        let turn = clients[0].view(table).await.unwrap().turn_seat as usize;
        let view = clients[turn].view(table).await.unwrap();
        let finished = view.summary.as_ref().unwrap().state == pb::TableState::Finished as i32;
        if let Some((at, _)) = penalised
            && (finished || view.hand_number as u32 > at)
        {
            return at;
        }
        assert!(
            !finished,
            "the match ended without a penalised move offered"
        );
        if view.hand_number != hand {
            hand = view.hand_number;
            bots = (0..4).map(|_| Level::Strong.bot()).collect();
        }
        let offered = || async {
            let mut c = clients[turn].clone();
            let r = c.req(pb::ListLegalActionsRequest {
                table: table.to_owned(),
            });
            c.api
                .list_legal_actions(r)
                .await
                .unwrap()
                .into_inner()
                .actions
        };
        let command = match penalised {
            None => {
                let actions = offered().await;
                let costly: Vec<&pb::LegalAction> =
                    actions.iter().filter(|a| a.penalty_points > 0).collect();
                let pick = costly
                    .iter()
                    .find(|a| a.command.as_ref().is_some_and(is_discard))
                    .or(costly.first());
                match pick {
                    Some(action) => {
                        penalised = Some((view.hand_number as u32, turn));
                        action.command.clone().unwrap()
                    }
                    None => command_to_proto(&bots[turn].act(&engine_view(&view))).unwrap(),
                }
            }
            // The penalised seat's turn goes on (a wrong opening leaves only a discard).
            Some((at, seat)) if seat == turn && view.hand_number as u32 == at => {
                let actions = offered().await;
                let free = actions
                    .iter()
                    .find(|a| a.penalty_points == 0 && a.command.as_ref().is_some_and(is_discard))
                    .or(actions.iter().find(|a| a.penalty_points == 0))
                    .expect("a move without a penalty is offered");
                penalised = Some((at, usize::MAX));
                free.command.clone().unwrap()
            }
            Some(_) => command_to_proto(&bots[turn].act(&engine_view(&view))).unwrap(),
        };
        clients[turn]
            .submit(table, &uuid(), command)
            .await
            .unwrap_or_else(|e| panic!("seat {turn}'s move refused: {e:?}"));
    }
    panic!("the hand with the penalty did not end");
}

/// Where the screenshot goes.
fn artifact(name: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("artifacts").join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn support_steps_through_a_finished_hand_to_its_penalty_in_chromium() {
    let Some((chromium, chromedriver)) = browser() else {
        return;
    };
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let app = spawn_app(settings(&infra)).await;
    let channel = connect(app.port).await;
    let (table, mut clients) = seated_table(channel.clone(), &app.settings, 3).await;
    let hand = play_with_a_penalty(&table, &mut clients).await;
    let mut support = Client::new(channel.clone(), &app.settings, "support-page", &["support"]);

    // What the engine makes of the stored hand: its events re-dealt from the revealed seed, the
    // first penalty, the state after it, its line told.
    let (stored_events, _) = stored(&app.settings, &table).await;
    let events: Vec<TableEvent> = stored_events.iter().map(|r| r.event.clone()).collect();
    let span = history::hand_span(&events, hand).unwrap();
    let deals = history::hand_deals(
        &span.rules,
        stored_events.iter().map(|r| (r.version, &r.event)),
        hand,
    )
    .unwrap();
    // The first penalty of the hand (in its first deal that has one).
    let (engine, at) = deals
        .iter()
        .find_map(|deal| {
            deal.iter()
                .position(|e| matches!(e, Event::PenaltyCharged { .. }))
                .map(|at| (deal, at))
        })
        .expect("the hand has its penalty");
    let Event::PenaltyCharged {
        seat,
        points,
        reason,
        ..
    } = engine[at]
    else {
        unreachable!()
    };
    let told = okey_rules::replay::narrate(engine)[at].text.clone();
    let after = Hand::replay(&engine[..=at]).unwrap();
    let rack: Vec<String> = after.racks[seat as usize]
        .iter()
        .map(|t| t.to_string())
        .collect();

    let browser = Browser::start(&chromium, &chromedriver).await;
    let page = format!("http://127.0.0.1:{}/replay/", app.port);
    browser.open(&page).await;
    let token = token(&app.settings, "support-page", &["support"]);
    browser.type_into("#token", &token).await;
    browser.type_into("#table", &table).await;
    browser.type_into("#hand", &hand.to_string()).await;
    browser.click("#load").await;
    browser
        .wait_for(
            "the loaded hand",
            "return document.getElementById('status').textContent.includes('steps')",
        )
        .await;

    // To the penalty, from the list of events.
    browser
        .click("#events li[data-event='PenaltyCharged'] button")
        .await;
    browser
        .wait_for(
            "the penalty step",
            "return document.getElementById('step-event').textContent === 'PenaltyCharged'",
        )
        .await;
    let step: usize = browser.text("#step-index").await.parse().unwrap();
    assert_eq!(
        browser.text("#told").await,
        told,
        "the told line is the engine's"
    );
    assert!(
        told.contains(&format!("+{points} ({})", reason.code())),
        "{told}"
    );
    let shown = browser.text("#penalty").await;
    assert!(
        shown.contains(&format!("seat {seat} +{points} ({})", reason.code())),
        "{shown}"
    );
    let shown_rack = browser
        .script(&format!(
            "return [...document.querySelectorAll('#rack-{seat} .tile')].map(t => t.textContent)"
        ))
        .await;
    assert_eq!(
        shown_rack,
        json!(rack),
        "seat {seat}'s rack after the penalty"
    );
    assert_eq!(
        browser.text("#pile").await,
        after.pile_len().to_string(),
        "the pile count"
    );
    let shot = artifact("replay-page-penalty.png");
    browser.screenshot(&shot).await;
    println!("screenshot of the penalty step: {}", shot.display());

    // The link names the place, never the token; the token stays in the tab.
    let hash = browser.script("return location.hash").await;
    let id = table.strip_prefix("tables/").unwrap();
    assert_eq!(
        hash,
        json!(format!("#table={id}&hand={hand}&step={step}")),
        "the fragment"
    );
    let url = browser.script("return location.href").await;
    assert!(!url.as_str().unwrap().contains(&token));
    assert_eq!(
        browser
            .script("return sessionStorage.getItem('okey.replay.token')")
            .await,
        json!(token)
    );

    // The arrow keys step.
    browser.press(ARROW_RIGHT).await;
    browser
        .wait_for(
            "the next step",
            &format!(
                "return document.getElementById('step-index').textContent === '{}'",
                step + 1
            ),
        )
        .await;
    browser.press(ARROW_LEFT).await;
    browser
        .wait_for(
            "the step before",
            &format!("return document.getElementById('step-index').textContent === '{step}'"),
        )
        .await;

    // A shared link to the last step opens there (a new page load reads the hand again), with
    // the scores and their basis.
    let steps: usize = browser.text("#step-count").await.parse().unwrap();
    let link = format!("{page}#table={id}&hand={hand}&step={steps}");
    browser.open("about:blank").await;
    browser.open(&link).await;
    browser
        .wait_for(
            "the last step",
            "return document.getElementById('step-event').textContent === 'HandEnded'",
        )
        .await;
    let ended = Hand::replay(deals.last().unwrap()).unwrap();
    let bases = ended.score_bases().unwrap();
    for (s, basis) in bases.iter().enumerate() {
        let row = browser.text(&format!("#score-{s}")).await;
        assert!(row.contains(&basis.to_string()), "seat {s}: {row}");
    }
    assert_eq!(browser.text("#pile").await, ended.pile_len().to_string());

    // Without a token in the tab the link asks for one and reads nothing.
    browser.script("sessionStorage.clear(); return true").await;
    browser.open("about:blank").await;
    browser.open(&link).await;
    let asked = browser
        .wait_for(
            "the request for a token",
            "return document.getElementById('error').textContent",
        )
        .await;
    assert!(asked.as_str().unwrap().contains("token"), "{asked}");
    assert!(
        browser
            .script("return document.getElementById('replay').hidden")
            .await
            .as_bool()
            .unwrap()
    );

    // Support's two page loads are the hand's two reads in the audit log.
    let reads = support
        .api
        .list_hand_reads(support.req(pb::ListHandReadsRequest {
            table: table.clone(),
            page_size: 0,
            page_token: String::new(),
        }))
        .await
        .unwrap()
        .into_inner()
        .reads;
    assert_eq!(reads.len(), 2, "{reads:?}");
    assert!(
        reads
            .iter()
            .all(|r| r.reader == "players/support-page" && r.hand_number == hand as i32 && !r.live)
    );

    drop(browser);
    app.stop().await;
}
