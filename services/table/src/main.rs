//! The `table` binary: reads the settings, starts telemetry, builds the application and runs it
//! until SIGTERM or SIGINT.

use okey_platform::{ServiceKind, Settings, build_then_serve, telemetry};
use table::startup::Application;

// mimalloc instead of the system allocator: a command allocates many small, short-lived buffers
// (protobuf, JSON, HTTP/2 frames) across worker threads, where glibc's malloc spent about a
// quarter of the service's CPU under load (`cargo bench -p table --bench load`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::load(ServiceKind::Table)?;
    let _telemetry = telemetry::init(
        ServiceKind::Table.name(),
        env!("CARGO_PKG_VERSION"),
        &settings.telemetry,
    )?;
    build_then_serve(Application::build(&settings), |application, shutdown| {
        application.run_until_stopped(shutdown)
    })
    .await?;
    Ok(())
}
