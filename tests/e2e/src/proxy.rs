//! A TCP proxy for one link between services that makes the network bad: every chunk it forwards
//! waits a random latency, a share of new connections is dropped at once, and every so often one
//! open connection is reset (closed with RST, both ways, in the middle of whatever it carried).
//! It counts what it did, for the suite's table.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// What the proxy does to the link.
#[derive(Clone, Debug)]
pub struct Faults {
    /// Each forwarded chunk waits between these many milliseconds (uniform).
    pub latency_ms: (u64, u64),
    /// One new connection in this many is closed at once (0: none).
    pub drop_one_in: u64,
    /// How often one open connection is reset (`None`: never).
    pub reset_every: Option<Duration>,
}

/// What a proxy did so far.
#[derive(Debug, Default)]
pub struct ProxyStats {
    pub connections: AtomicU64,
    pub dropped: AtomicU64,
    pub reset: AtomicU64,
}

/// A running proxy; it stops when dropped.
pub struct Proxy {
    pub port: u16,
    pub stats: Arc<ProxyStats>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

type Open = Arc<Mutex<BTreeMap<u64, Arc<Notify>>>>;

impl Proxy {
    /// Listens on a free loopback port and forwards to `target` on loopback.
    pub async fn start(target: u16, faults: Faults) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a proxy port");
        let port = listener.local_addr().expect("its address").port();
        let stats = Arc::new(ProxyStats::default());
        let open: Open = Arc::default();
        let mut tasks = Vec::new();
        let seed = u64::from(port) * 7919;
        tasks.push(tokio::spawn(accept_loop(
            listener,
            target,
            faults.clone(),
            stats.clone(),
            open.clone(),
            seed,
        )));
        if let Some(every) = faults.reset_every {
            let (stats, open) = (stats.clone(), open.clone());
            tasks.push(tokio::spawn(async move {
                let mut rng = ChaCha8Rng::seed_from_u64(seed + 1);
                let mut tick = tokio::time::interval(every);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let victim = {
                        let open = open.lock().expect("the open connections");
                        if open.is_empty() {
                            None
                        } else {
                            let i = (rng.next_u64() % open.len() as u64) as usize;
                            open.values().nth(i).cloned()
                        }
                    };
                    if let Some(victim) = victim {
                        victim.notify_one();
                        stats.reset.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }));
        }
        Proxy { port, stats, tasks }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Connections dropped plus connections reset so far.
    pub fn faults_injected(&self) -> u64 {
        self.stats.dropped.load(Ordering::Relaxed) + self.stats.reset.load(Ordering::Relaxed)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    target: u16,
    faults: Faults,
    stats: Arc<ProxyStats>,
    open: Open,
    seed: u64,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut next_id = 0u64;
    loop {
        let Ok((client, _)) = listener.accept().await else {
            continue;
        };
        stats.connections.fetch_add(1, Ordering::Relaxed);
        if faults.drop_one_in > 0 && rng.next_u64().is_multiple_of(faults.drop_one_in) {
            stats.dropped.fetch_add(1, Ordering::Relaxed);
            let _ = client.set_zero_linger();
            drop(client);
            continue;
        }
        next_id += 1;
        let id = next_id;
        let reset = Arc::new(Notify::new());
        open.lock()
            .expect("the open connections")
            .insert(id, reset.clone());
        let (faults, open, conn_seed) = (faults.clone(), open.clone(), rng.next_u64());
        tokio::spawn(async move {
            if let Ok(server) = TcpStream::connect(("127.0.0.1", target)).await {
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let _ = client.set_zero_linger();
                let _ = server.set_zero_linger();
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                let up = pump(cr, sw, faults.latency_ms, conn_seed);
                let down = pump(sr, cw, faults.latency_ms, conn_seed ^ 0x5555);
                tokio::select! {
                    _ = async { tokio::join!(up, down) } => {}
                    () = reset.notified() => {}
                }
                // Dropping both halves of both sockets (zero linger) resets them.
            }
            open.lock().expect("the open connections").remove(&id);
        });
    }
}

/// Copies `from` to `to`, each chunk after a random latency, until either side closes.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    latency_ms: (u64, u64),
    seed: u64,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let (lo, hi) = latency_ms;
        let wait = lo + rng.next_u64() % (hi.saturating_sub(lo) + 1);
        if wait > 0 {
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}
