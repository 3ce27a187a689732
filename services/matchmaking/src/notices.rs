//! Changes as they happen, from every replica: PostgreSQL triggers `pg_notify` ticket and room
//! changes on commit (`migrations/matchmaking/0002…`; tickets once per statement, naming their
//! queue keys, so a batch of tables is one notification: `0004…`), one listener per process hears
//! them and fans them out to the streams (WatchTicket, WatchRoom) of this process, which then read
//! the row.
//! A notification is sent only for committed changes, so a stream never shows a state that was
//! rolled back. While the listener is reconnecting, notifications can be lost: it then tells every
//! stream to read again ([`Notice::Resync`]).

use std::time::Duration;

use okey_platform::Secret;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;
use uuid::Uuid;

/// One change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Tickets of these queue keys (`rules_key`) changed: a ticket of one of them may have changed
    /// its state, or its `players_found`.
    Tickets(Vec<String>),
    /// A room or its members changed.
    Room(Uuid),
    /// Notifications may have been missed: read everything again.
    Resync,
}

/// The process's fan-out of notices.
#[derive(Clone, Debug)]
pub struct Notices {
    sender: broadcast::Sender<Notice>,
}

impl Notices {
    /// Starts listening on the database at `url`, on a connection of its own (not the pool's).
    pub fn start(url: Secret<String>) -> Notices {
        let (sender, _) = broadcast::channel(4096);
        let notices = Notices { sender };
        let out = notices.sender.clone();
        tokio::spawn(async move {
            loop {
                if let Err(e) = listen(url.expose(), &out).await {
                    tracing::warn!(error = %e, "change notifications lost; listening again");
                }
                let _ = out.send(Notice::Resync);
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        notices
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.sender.subscribe()
    }
}

async fn listen(url: &str, out: &broadcast::Sender<Notice>) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect(url).await?;
    listener.listen_all(["okey_tickets", "okey_rooms"]).await?;
    // Whatever changed before we listened.
    let _ = out.send(Notice::Resync);
    loop {
        let Some(n) = listener.try_recv().await? else {
            // The connection dropped (and is re-established by the next call): say so.
            let _ = out.send(Notice::Resync);
            continue;
        };
        let payload = n.payload();
        let notice = match n.channel() {
            "okey_tickets" => {
                Notice::Tickets(payload.split_whitespace().map(str::to_owned).collect())
            }
            _ => match Uuid::parse_str(payload) {
                Ok(id) => Notice::Room(id),
                Err(_) => continue,
            },
        };
        let _ = out.send(notice);
    }
}
