//! The `table` binary: reads the settings, starts telemetry, builds the application and runs it
//! until SIGTERM or SIGINT.

use okey_platform::{ServiceKind, Settings, shutdown_signal, telemetry};
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
    // SIGTERM and SIGINT are caught from here on: one that comes while the service starts
    // stops it there, and never kills it mid-way.
    let mut shutdown = Box::pin(shutdown_signal());
    let application = tokio::select! {
        built = Application::build(&settings) => built?,
        () = &mut shutdown => return Ok(()),
    };
    application.run_until_stopped(shutdown).await?;
    Ok(())
}
