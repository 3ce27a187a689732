//! A host of these tests' own: no dependencies, on a free loopback port, until stopped.

use okey_platform::{Dependencies, ServerError, ServiceHost};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running host and what stops it.
pub struct Running {
    pub port: u16,
    stop: oneshot::Sender<()>,
    server: JoinHandle<Result<(), ServerError>>,
}

/// Runs `host` with no dependencies (its health says SERVING once it has probed them).
pub fn run(host: ServiceHost) -> Running {
    let port = host.local_addr().port();
    let dependencies = Dependencies {
        postgres: None,
        nats: None,
        jetstream: None,
        redis: None,
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(host.run_until_stopped(dependencies, async move {
        let _ = stopped.await;
    }));
    Running { port, stop, server }
}

impl Running {
    /// Stops the host and checks it stopped cleanly.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.server
            .await
            .expect("the server task ran")
            .expect("the server stopped cleanly");
    }
}
