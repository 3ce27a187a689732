//! One move is one trace: the real table, accounts and scoring services in this process export
//! their spans over OTLP to an in-process receiver. A player's `SubmitCommand` is one trace
//! holding the call (client and server spans), the table's decide-and-append, the JetStream
//! publish and both consumers' processing, each a child of the one before; a bot's move is a
//! root span of its own with the table and the seat; a refused call's spans are errors with
//! `error.type`.

use std::time::{Duration, Instant};

use okey_bots::Level;
use okey_platform::auth::Role;
use okey_platform::settings::{LogFormat, TelemetrySettings};
use okey_platform::telemetry::{Export, TracedChannel, init_with, traced};
use okey_platform::testing::{InProcess, TestInfra, connect, test_token};
use okey_platform::{ServiceKind, Settings};
use okey_proto::v1 as pb;
use okey_proto::v1::table_service_client::TableServiceClient;
use tonic::Request;
use traces::{Receiver, STATUS_ERROR, Span, kind};

const WITHIN: Duration = Duration::from_secs(60);
const SUBMIT: &str = "okey.v1.TableService/SubmitCommand";
/// The person in seat 0: an account's id, as tokens carry it.
const PERSON: &str = "5f0c1a52-3b7e-4d7a-9a61-0c2f8e4b7d13";

fn env_set(env: &mut Vec<(String, String)>, key: &str, value: &str) {
    env.retain(|(k, _)| k != key);
    env.push((key.to_owned(), value.to_owned()));
}

fn settings(service: ServiceKind, env: Vec<(String, String)>) -> Settings {
    Settings::from_sources(service, None, env).expect("valid test settings")
}

fn signed<T>(message: T, player: &str, role: Role) -> Request<T> {
    let mut request = Request::new(message);
    let token = test_token(player, &[role]);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ASCII token"),
    );
    request
}

async fn seat_view(client: &mut TableServiceClient<TracedChannel>, table: &str) -> pb::SeatView {
    client
        .get_seat_view(signed(
            pb::GetSeatViewRequest {
                table: table.to_owned(),
                view_form: pb::SeatViewForm::Unspecified as i32,
                min_version: None,
            },
            PERSON,
            Role::Player,
        ))
        .await
        .expect("the seat view")
        .into_inner()
        .view
        .expect("a view")
}

/// The seat view once it is seat 0's turn in a hand being played (the bots move first if
/// they start).
async fn my_turn(client: &mut TableServiceClient<TracedChannel>, table: &str) -> pb::SeatView {
    let deadline = Instant::now() + WITHIN;
    loop {
        let view = seat_view(client, table).await;
        let playing = matches!(
            pb::HandPhase::try_from(view.phase),
            Ok(pb::HandPhase::Take | pb::HandPhase::Act | pb::HandPhase::DiscardOnly)
        );
        if playing && view.turn_seat == 0 {
            return view;
        }
        assert!(Instant::now() < deadline, "never seat 0's turn: {view:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Seat 0's next command, decided by a bot on its own view.
fn decide(view: &pb::SeatView) -> pb::Command {
    let engine: okey_rules::SeatView =
        serde_json::from_str(&view.engine_view).expect("engine_view is a SeatView");
    let command = Level::Strong.bot().act(&engine);
    okey_platform::command::command_to_proto(&command).expect("a bot's command has a wire form")
}

async fn submit(
    client: &mut TableServiceClient<TracedChannel>,
    table: &str,
    command: pb::Command,
) -> Result<pb::SubmitCommandResponse, tonic::Status> {
    client
        .submit_command(signed(
            pb::SubmitCommandRequest {
                request_id: format!("move-{}", table::ids::random_uuid()),
                table: table.to_owned(),
                command: Some(command),
                expected_version: None,
                view_form: pb::SeatViewForm::Unspecified as i32,
            },
            PERSON,
            Role::Player,
        ))
        .await
        .map(tonic::Response::into_inner)
}

fn in_trace<'a>(spans: &'a [Span], trace: &str) -> impl Iterator<Item = &'a Span> {
    spans.iter().filter(move |s| s.trace_id == trace)
}

fn child_of<'a>(spans: &'a [Span], parent: &Span, kind: i32) -> Vec<&'a Span> {
    in_trace(spans, &parent.trace_id)
        .filter(|s| s.parent_span_id == parent.span_id && s.kind == kind)
        .collect()
}

/// The consumer `group`'s CONSUMER span whose parent is one of `publishes`.
fn processed_by<'a>(spans: &'a [Span], publishes: &[&Span], group: &str) -> Option<&'a Span> {
    spans.iter().find(|s| {
        s.kind == kind::CONSUMER
            && s.attr("messaging.consumer.group.name") == Some(group)
            && publishes
                .iter()
                .any(|p| p.trace_id == s.trace_id && p.span_id == s.parent_span_id)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_move_is_one_trace_through_the_table_nats_and_every_consumer() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let receiver = Receiver::start().await;
    let telemetry = init_with(
        "traces-test",
        env!("CARGO_PKG_VERSION"),
        &TelemetrySettings {
            log_filter: "warn".into(),
            log_format: LogFormat::Text,
            otlp_endpoint: receiver.endpoint(),
        },
        // Spans leave a few milliseconds after they end: the test waits for them, not seconds.
        Export {
            spans_every: Some(Duration::from_millis(50)),
            metrics_every: None,
        },
    )
    .expect("telemetry starts");

    // The table, bots playing without a pause.
    let mut env = infra.env_for(ServiceKind::Table, 0);
    env_set(&mut env, "OKEY_LIVE__BOT_PACE_MS", "0");
    env_set(&mut env, "OKEY_LIVE__SWEEP_INTERVAL_MS", "20");
    env_set(&mut env, "OKEY_DATABASE__MAX_CONNECTIONS", "8");
    let table_settings = settings(ServiceKind::Table, env);
    let prefix = table_settings.nats.subject_prefix.clone();
    let app = table::startup::Application::build(&table_settings)
        .await
        .expect("table starts");
    let table_service =
        InProcess::spawn(app.local_addr().port(), |stop| app.run_until_stopped(stop));
    // Accounts (its statistics consumer) and scoring (its ledger), on the table's subjects.
    let mut env = infra.env_for(ServiceKind::Accounts, 0);
    env_set(&mut env, "OKEY_NATS__SUBJECT_PREFIX", &prefix);
    let app = accounts::startup::Application::build(&settings(ServiceKind::Accounts, env))
        .await
        .expect("accounts starts");
    let accounts_service =
        InProcess::spawn(app.local_addr().port(), |stop| app.run_until_stopped(stop));
    let mut env = infra.env_for(ServiceKind::Scoring, 0);
    env_set(&mut env, "OKEY_NATS__SUBJECT_PREFIX", &prefix);
    let app = scoring::startup::Application::build(&settings(ServiceKind::Scoring, env))
        .await
        .expect("scoring starts");
    let scoring_service =
        InProcess::spawn(app.local_addr().port(), |stop| app.run_until_stopped(stop));

    // This test calls as an app would, through a traced channel: each call is a client span.
    let channel = connect(table_service.port, Duration::from_secs(10)).await;
    let mut client = TableServiceClient::new(traced(channel, &table_service.url()));
    let table = client
        .create_table(signed(
            pb::CreateTableRequest {
                request_id: format!("trace-{}", table::ids::random_uuid()),
                rules: Some(pb::RuleSet {
                    preset: "classic".into(),
                    ..Default::default()
                }),
                seats: vec![pb::SeatAssignment {
                    seat: 0,
                    occupant: Some(pb::seat_assignment::Occupant::Player(format!(
                        "players/{PERSON}"
                    ))),
                    ..Default::default()
                }],
                empty_seat_bots: Some(pb::BotLevel::Easy as i32),
                ..Default::default()
            },
            "admin",
            Role::Admin,
        ))
        .await
        .expect("table created")
        .into_inner()
        .table
        .expect("a table")
        .name;
    let table_id = table.trim_start_matches("tables/").to_owned();

    // 1. One SubmitCommand of the person in seat 0.
    let view = my_turn(&mut client, &table).await;
    submit(&mut client, &table, decide(&view))
        .await
        .expect("seat 0's move is accepted");
    let (call, server, publishes) = receiver
        .wait_for("the move's call, append and publishes", WITHIN, |spans| {
            let call = spans.iter().find(|s| {
                s.kind == kind::CLIENT && s.name == SUBMIT && s.status_code != STATUS_ERROR
            })?;
            let [server] = child_of(spans, call, kind::SERVER)[..] else {
                return None;
            };
            // The table's decide-and-append (`table play`), whose events were published.
            let public = format!("{prefix}.table.{table_id}.events");
            child_of(spans, server, kind::INTERNAL)
                .into_iter()
                .filter(|s| s.name == "table play")
                .find_map(|submitted| {
                    let publishes = child_of(spans, submitted, kind::PRODUCER);
                    publishes
                        .iter()
                        .any(|p| p.attr("messaging.destination.name") == Some(public.as_str()))
                        .then(|| {
                            let publishes: Vec<Span> = publishes.into_iter().cloned().collect();
                            (call.clone(), server.clone(), publishes)
                        })
                })
        })
        .await;
    let statistics = receiver
        .wait_for(
            "the statistics consumer's span of the move",
            WITHIN,
            |spans| {
                processed_by(
                    spans,
                    &publishes.iter().collect::<Vec<_>>(),
                    "accounts-statistics",
                )
                .cloned()
            },
        )
        .await;
    let ledger = receiver
        .wait_for("scoring's span of the move", WITHIN, |spans| {
            processed_by(
                spans,
                &publishes.iter().collect::<Vec<_>>(),
                "scoring-ledger",
            )
            .cloned()
        })
        .await;

    // One trace, started by the call, the server a child of it.
    assert!(
        call.parent_span_id.is_empty(),
        "the app's call starts the trace"
    );
    for span in [&server, &statistics, &ledger] {
        assert_eq!(
            span.trace_id, call.trace_id,
            "{} in the move's trace",
            span.name
        );
    }
    assert_eq!(server.name, SUBMIT);
    assert_eq!(server.attr("rpc.system"), Some("grpc"));
    assert_eq!(server.attr("rpc.service"), Some("okey.v1.TableService"));
    assert_eq!(server.attr("rpc.method"), Some("SubmitCommand"));
    assert_eq!(server.attr("rpc.grpc.status_code"), Some("0"));
    assert!(server.attr("server.port").is_some() && server.attr("network.peer.address").is_some());
    assert_eq!(call.attr("rpc.grpc.status_code"), Some("0"));
    // The publish spans: PRODUCER, NATS, the event as message id.
    for publish in &publishes {
        assert_eq!(publish.trace_id, call.trace_id);
        assert_eq!(publish.attr("messaging.system"), Some("nats"));
        assert!(publish.attr("messaging.message.id").is_some());
        assert!(publish.name.starts_with("publish "), "{}", publish.name);
    }
    // Each consumer: CONSUMER, NATS, the message it processed, a child of its publish.
    for (consumer, group) in [
        (&statistics, "accounts-statistics"),
        (&ledger, "scoring-ledger"),
    ] {
        assert_eq!(consumer.name, format!("process {group}"));
        assert_eq!(consumer.attr("messaging.system"), Some("nats"));
        let parent = publishes
            .iter()
            .find(|p| p.span_id == consumer.parent_span_id)
            .expect("the parent is a publish span");
        assert_eq!(
            consumer.attr("messaging.message.id"),
            parent.attr("messaging.message.id"),
            "it processed the message that span published"
        );
        assert_eq!(
            consumer.attr("messaging.destination.name"),
            parent.attr("messaging.destination.name")
        );
    }

    // 2. Seat 0 finishes its turn; a bot plays the next: a root span of its own.
    let deadline = Instant::now() + WITHIN;
    loop {
        let view = seat_view(&mut client, &table).await;
        let playing = matches!(
            pb::HandPhase::try_from(view.phase),
            Ok(pb::HandPhase::Take | pb::HandPhase::Act | pb::HandPhase::DiscardOnly)
        );
        if !playing || view.turn_seat != 0 {
            break;
        }
        submit(&mut client, &table, decide(&view))
            .await
            .expect("seat 0's move is accepted");
        assert!(Instant::now() < deadline, "seat 0's turn never ended");
    }
    let bot_move = receiver
        .wait_for("a bot move's root span and its publish", WITHIN, |spans| {
            spans
                .iter()
                .filter(|s| {
                    s.name == "table bot move"
                        && s.parent_span_id.is_empty()
                        && s.attr("okey.table.id") == Some(table_id.as_str())
                })
                .find(|root| {
                    // The move it made was appended and published in the same trace.
                    in_trace(spans, &root.trace_id).any(|s| s.kind == kind::PRODUCER)
                })
                .cloned()
        })
        .await;
    let seat: u8 = bot_move
        .attr("okey.seat")
        .and_then(|s| s.parse().ok())
        .expect("the seat is an attribute");
    assert!((1..=3).contains(&seat), "a bot's seat: {seat}");
    assert_ne!(
        bot_move.trace_id, call.trace_id,
        "not part of the person's move"
    );

    // 3. A refused call: the client and the server span are errors with `error.type`.
    let refused = submit(&mut client, "tables/not-a-table", decide(&view))
        .await
        .expect_err("a malformed table name is refused");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    let (failed_call, failed_server) = receiver
        .wait_for("the refused call's spans", WITHIN, |spans| {
            let call = spans.iter().find(|s| {
                s.kind == kind::CLIENT && s.name == SUBMIT && s.status_code == STATUS_ERROR
            })?;
            let [server] = child_of(spans, call, kind::SERVER)[..] else {
                return None;
            };
            Some((call.clone(), server.clone()))
        })
        .await;
    for span in [&failed_call, &failed_server] {
        assert_eq!(span.status_code, STATUS_ERROR, "{span:?}");
        assert_eq!(span.attr("error.type"), Some("INVALID_ARGUMENT"));
        assert_eq!(span.attr("rpc.grpc.status_code"), Some("3"));
    }

    // Every span names the process that made it.
    for span in receiver.spans() {
        assert_eq!(
            span.resource.get("service.name").map(String::as_str),
            Some("okey-traces-test")
        );
        assert_eq!(
            span.resource.get("service.version").map(String::as_str),
            Some(env!("CARGO_PKG_VERSION"))
        );
        assert!(span.resource.contains_key("service.instance.id"));
    }

    scoring_service.stop().await;
    accounts_service.stop().await;
    table_service.stop().await;
    // Shutting the exporter down waits for its last export, which this runtime drives.
    let _ = tokio::task::spawn_blocking(move || drop(telemetry)).await;

    // That last export holds the metrics, over the same OTLP endpoint (the receiver accepts
    // them, as a collector does): the calls' durations and both consumers' lag.
    let exported: std::collections::BTreeSet<String> = receiver
        .metric_exports()
        .into_iter()
        .flat_map(|e| e.metrics)
        .collect();
    for metric in [
        "rpc.server.call.duration",
        "okey.table.events.appended",
        "okey.scoring.consumer.lag.events",
        "okey.accounts.statistics.lag.seconds",
    ] {
        assert!(exported.contains(metric), "{metric} not in {exported:?}");
    }
}
