//! The boxed future every waiting call is, on its own so that the guard (which makes one) and the
//! registrations (whose async tools return one) need not import each other.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what an async tool call is. It may borrow from the executor and the
/// caller for `'a`, the length of the call.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
