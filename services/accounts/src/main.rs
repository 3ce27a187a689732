//! The `accounts` binary: reads the settings, starts telemetry, builds the application and runs it
//! until SIGTERM or SIGINT.

use accounts::startup::Application;
use okey_platform::{ServiceKind, Settings, build_then_serve, telemetry};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::load(ServiceKind::Accounts)?;
    let _telemetry = telemetry::init(
        ServiceKind::Accounts.name(),
        env!("CARGO_PKG_VERSION"),
        &settings.telemetry,
    )?;
    build_then_serve(Application::build(&settings), |application, shutdown| {
        application.run_until_stopped(shutdown)
    })
    .await?;
    Ok(())
}
