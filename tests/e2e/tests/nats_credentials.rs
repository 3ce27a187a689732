//! The platform on a NATS server that needs a user and password, given as operations.md says:
//! in the URL (`nats://user:password@host:port`, percent-encoded). The NATS client reads no
//! credentials from a URL, so the services hand them over as its options; a match is played
//! through the four services with every record checked, as in the fault tests. The NATS client
//! logs the address it connects to at DEBUG: with that level on, the password appears in no
//! service's log.

use e2e::platform::Layout;
use e2e::report::{render, show};
use e2e::scenario::{Group, World};
use e2e::servers::OwnNats;
use okey_platform::testing::TestInfra;

const PASSWORD: &str = "pw/Nats:Needle@7c1e";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_platform_runs_on_a_nats_that_needs_a_password_and_never_logs_it() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let nats = tokio::task::block_in_place(|| OwnNats::start_with_user("okey", PASSWORD));

    // The server refuses a client without the credentials, so what follows gave them.
    let refused = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        async_nats::connect(nats.url()),
    )
    .await
    .expect("NATS answers");
    assert!(
        refused.is_err(),
        "NATS refuses a client without credentials"
    );

    let infra = TestInfra {
        nats_url: nats.url_with_credentials(),
        ..infra
    };
    let layout = Layout {
        extra_env: vec![(
            "OKEY_TELEMETRY__LOG_FILTER".into(),
            "warn,async_nats=trace".into(),
        )],
        ..Layout::default()
    };
    let mut world = World::start("nats-credentials", &infra, layout).await;
    world.play(Group::Alone, 1);
    let row = world
        .finish("NATS with a user and password", 0, Vec::new())
        .await;
    show(&render(std::slice::from_ref(&row)));
    assert!(row.discrepancies.is_empty(), "{}", row.logs);
    assert_eq!(row.matches, 1, "the match was played out");

    let logs = std::env::temp_dir().join(format!("okey-e2e-logs-{}", std::process::id()));
    let mut read = 0;
    let mut connects = 0;
    for entry in std::fs::read_dir(&logs).expect("the services' logs") {
        let path = entry.unwrap().path();
        let named = path.file_name().unwrap().to_string_lossy().into_owned();
        if !named.starts_with("nats-credentials-") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        read += 1;
        connects += text.matches("attempting connection").count();
        for needle in [PASSWORD, "Needle", "Needle%407c1e"] {
            assert!(!text.contains(needle), "{named} logs the NATS password");
        }
    }
    assert!(read >= 4, "every service's log was read ({read})");
    assert!(
        connects >= 3,
        "the NATS client's DEBUG lines were captured ({connects})"
    );
    drop(nats);
}
