//! The `accounts` binary: reads the settings, starts telemetry, builds the application and runs it
//! until SIGTERM or SIGINT.

use accounts::startup::Application;
use okey_platform::{ServiceKind, Settings, shutdown_signal, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::load(ServiceKind::Accounts)?;
    let _telemetry = telemetry::init(
        ServiceKind::Accounts.name(),
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
