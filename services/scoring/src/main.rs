//! The `scoring` binary: reads the settings, starts telemetry, builds the application and runs it
//! until SIGTERM or SIGINT.

use okey_platform::{ServiceKind, Settings, shutdown_signal, telemetry};
use scoring::startup::Application;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::load(ServiceKind::Scoring)?;
    let _telemetry = telemetry::init(ServiceKind::Scoring.name(), &settings.telemetry)?;
    let application = Application::build(&settings).await?;
    application.run_until_stopped(shutdown_signal()).await?;
    Ok(())
}
