//! An [`Authorizer`] for a program a person runs: it shows the authorization URL (the person
//! opens it in a browser and logs in) and listens on 127.0.0.1 for the authorization server's
//! redirect, as OAuth for native apps has it (RFC 8252, a loopback redirect URI).
//!
//! It listens on loopback only, at a port the system chooses, for as long as one authorization
//! takes ([`LOOPBACK_WAIT`]); each connection's request is read up to
//! [`MAX_CALLBACK_REQUEST_BYTES`] within ten seconds, and only `/callback` is answered. What
//! comes back must carry the `state` of the authorization URL (a callback with another is
//! refused and the wait goes on), and rmcp checks it again, so a request made by another
//! program on the machine can neither complete nor end an authorization. Each connection is
//! read on its own task, so one that says nothing holds up none.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::oauth::{AuthorizeFuture, Authorizer};

/// How long [`LoopbackRedirect`] waits for the person to authorize.
pub const LOOPBACK_WAIT: Duration = Duration::from_secs(300);

/// The most bytes of a request to the redirect URI that are read.
pub const MAX_CALLBACK_REQUEST_BYTES: usize = 8 * 1024;

/// How long one connection to the redirect URI may take to send its request.
const REQUEST_TIME: Duration = Duration::from_secs(10);

/// Who is shown the authorization URL.
type Show = Arc<dyn Fn(&str) + Send + Sync>;

/// Shows the authorization URL and takes the redirect on 127.0.0.1.
pub struct LoopbackRedirect {
    listener: tokio::sync::Mutex<TcpListener>,
    port: u16,
    show: Show,
    wait: Duration,
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .field("wait", &self.wait)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Listens on 127.0.0.1 at a port the system chooses; `show` is given each authorization
    /// URL, to show the person (print it, open a browser).
    pub async fn bind(show: impl Fn(&str) + Send + Sync + 'static) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackRedirect {
            listener: tokio::sync::Mutex::new(listener),
            port,
            show: Arc::new(show),
            wait: LOOPBACK_WAIT,
        })
    }

    /// Waits `wait` for the person instead of [`LOOPBACK_WAIT`].
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }
}

/// The target of a connection's `GET /callback` whose `state` is `state`, after answering it;
/// `None` for anything else (answered 404, or 400 for another authorization's callback).
async fn callback(mut stream: TcpStream, state: Option<String>) -> Option<String> {
    let mut request = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = tokio::time::timeout(REQUEST_TIME, async {
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 || request.len() + n > MAX_CALLBACK_REQUEST_BYTES {
                return None;
            }
            request.extend_from_slice(&chunk[..n]);
        }
        Some(())
    })
    .await;
    read.ok().flatten()?;
    let line = request.split(|&b| b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split(' ');
    let (method, target) = (words.next()?, words.next()?);
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let given = query_value(query, "state");
    let (status, page, found) = match (method, path) {
        ("GET", "/callback") if given == state => (
            "200 OK",
            "Authorized. You can close this page and go back to the program.",
            true,
        ),
        ("GET", "/callback") => ("400 Bad Request", "Not this authorization's.", false),
        _ => ("404 Not Found", "Not here.", false),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
    found.then(|| target.to_owned())
}

/// The value of `name` in a URL's query, decoded.
fn query_value(query: &str, name: &str) -> Option<String> {
    let query = format!("http://x/?{query}");
    let url = reqwest::Url::parse(&query).ok()?;
    url.query_pairs()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

impl Authorizer for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    fn authorize<'a>(&'a self, url: &'a str) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            // One authorization at a time listens.
            let listener = self.listener.lock().await;
            // Only the redirect of this authorization is taken: its `state`.
            let state = url
                .split_once('?')
                .and_then(|(_, q)| query_value(q, "state"));
            (self.show)(url);
            let waited = tokio::time::timeout(self.wait, async {
                // Each connection is read on its own, so one that says nothing holds up none.
                let mut connections = tokio::task::JoinSet::new();
                loop {
                    tokio::select! {
                        accepted = listener.accept() => match accepted {
                            Ok((stream, _)) => {
                                connections.spawn(callback(stream, state.clone()));
                            }
                            // Out of descriptors, say: wait a little rather than spin.
                            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                        },
                        Some(Ok(Some(target))) = connections.join_next() => {
                            return format!("http://127.0.0.1:{}{target}", self.port);
                        }
                    }
                }
            })
            .await;
            waited.map_err(|_| {
                format!(
                    "no authorization came back to {} within {:?} (LOOPBACK_WAIT)",
                    self.redirect_uri(),
                    self.wait
                )
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn the_redirect_to_the_callback_is_taken_and_nothing_else() {
        let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = Arc::clone(&shown);
        let authorizer = LoopbackRedirect::bind(move |url: &str| {
            seen.lock().unwrap().push(url.to_owned());
        })
        .await
        .unwrap();
        let port = authorizer.port;
        assert_eq!(
            authorizer.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
        let browser = tokio::spawn(async move {
            // Wait until the authorization listens, as a person would.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let other = get(port, "/favicon.ico").await;
            assert!(other.starts_with("HTTP/1.1 404"), "{other}");
            // A connection that says nothing holds up nothing.
            let _silent = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            // Another authorization's callback is refused, and the wait goes on.
            let other = get(port, "/callback?code=evil&state=other").await;
            assert!(other.starts_with("HTTP/1.1 400"), "{other}");
            let page = get(port, "/callback?code=abc&state=xyz").await;
            assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        });
        let redirect = authorizer
            .authorize("https://auth.example/authorize?x=1&state=xyz")
            .await
            .unwrap();
        browser.await.unwrap();
        assert_eq!(
            redirect,
            format!("http://127.0.0.1:{port}/callback?code=abc&state=xyz")
        );
        assert_eq!(
            *shown.lock().unwrap(),
            ["https://auth.example/authorize?x=1&state=xyz"]
        );
    }

    #[tokio::test]
    async fn no_redirect_in_time_is_an_error_naming_the_wait() {
        let authorizer = LoopbackRedirect::bind(|_: &str| {})
            .await
            .unwrap()
            .with_wait(Duration::from_millis(20));
        let error = authorizer
            .authorize("https://a.example/")
            .await
            .unwrap_err();
        assert!(error.contains("LOOPBACK_WAIT"), "{error}");
    }
}
