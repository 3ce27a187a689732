//! The platform over TLS to PostgreSQL and Redis: servers of the test's own that refuse any
//! connection without TLS, a certificate authority of its own, and every service given
//! `sslmode=verify-full` (with `sslrootcert`) and `rediss://` (trusting `SSL_CERT_FILE`). A match
//! is played through the four services and every record is checked, as in the fault tests.

use e2e::platform::Layout;
use e2e::report::{render, show};
use e2e::scenario::{Group, World};
use e2e::servers::{OwnPostgres, OwnRedis, TestCertificates};
use okey_platform::testing::TestInfra;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_platform_runs_on_postgres_and_redis_over_tls() {
    let Some(infra) = TestInfra::from_env() else {
        return;
    };
    let certificates = TestCertificates::generate();
    let postgres = tokio::task::block_in_place(|| OwnPostgres::start_tls(&certificates));
    let redis = tokio::task::block_in_place(|| OwnRedis::start_tls(&certificates));
    let ca = certificates.ca().display().to_string();
    let database_url = format!("{}?sslmode=verify-full&sslrootcert={ca}", postgres.url());

    // Both servers refuse a client without TLS, so what follows ran over it.
    let plain = format!("{}?sslmode=disable", postgres.url());
    let refused = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&plain)
        .await
        .expect_err("PostgreSQL refuses a connection without TLS");
    // 28000 invalid_authorization_specification: pg_hba.conf's `hostnossl … reject`.
    assert_eq!(
        refused
            .as_database_error()
            .and_then(|e| e.code())
            .as_deref(),
        Some("28000"),
        "refused for the lack of TLS: {refused}"
    );
    let plain = redis.url().replacen("rediss://", "redis://", 1);
    let answered = async {
        let client = redis::Client::open(plain.as_str())?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    };
    let answered = tokio::time::timeout(std::time::Duration::from_secs(5), answered).await;
    assert!(
        !matches!(answered, Ok(Ok(_))),
        "Redis answers only over TLS"
    );

    let infra = TestInfra {
        database_url,
        redis_url: redis.url(),
        ..infra
    };
    let layout = Layout {
        extra_env: vec![("SSL_CERT_FILE".into(), ca)],
        ..Layout::default()
    };
    let mut world = World::start("tls", &infra, layout).await;
    world.play(Group::Alone, 1);
    world.play(Group::Four, 1);
    let row = world
        .finish("PostgreSQL and Redis over TLS", 0, Vec::new())
        .await;
    show(&render(std::slice::from_ref(&row)));
    assert!(row.discrepancies.is_empty(), "{}", row.logs);
    assert_eq!(row.matches, 2, "both matches were played out");
    drop((redis, postgres));
}
