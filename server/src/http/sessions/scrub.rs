//! Keeps an app's token out of what reaches the browser. On Slurm the
//! proxy authenticates to the app with a token (app.rs says why), and
//! JupyterLab writes the token it runs with into its `/lab` page's
//! config — from where any script on the page, or anything the browser
//! keeps, could carry it to someone on the cluster who can reach the
//! node's port. So every response body from such an app is streamed
//! through [`scrub`], which drops each occurrence of the token, also
//! across chunk boundaries. Requests to the app ask for no compression,
//! so the token cannot hide inside gzip.

use axum::body::Body;
use futures_util::StreamExt;
use hyper::body::Bytes;

/// The body, with every occurrence of `token` removed.
pub fn scrub(body: Body, token: String) -> Body {
    let chunks = body.into_data_stream();
    let state = (chunks, Scrubber::new(token.into_bytes()), false);
    Body::from_stream(futures_util::stream::unfold(state, |(mut chunks, mut scrubber, done)| async move {
        if done {
            return None;
        }
        match chunks.next().await {
            Some(Ok(chunk)) => Some((Ok::<_, axum::Error>(scrubber.feed(&chunk, false)), (chunks, scrubber, false))),
            Some(Err(e)) => Some((Err(e), (chunks, scrubber, true))),
            None => Some((Ok(scrubber.feed(&[], true)), (chunks, scrubber, true))),
        }
    }))
}

/// Removes a fixed secret from a stream of chunks, holding back just
/// enough of each chunk's end to catch a secret split across two.
struct Scrubber {
    secret: Vec<u8>,
    held: Vec<u8>,
}

impl Scrubber {
    fn new(secret: Vec<u8>) -> Self {
        Self { secret, held: Vec::new() }
    }

    /// What may be sent of everything fed so far; at the `last` chunk,
    /// all of it.
    fn feed(&mut self, chunk: &[u8], last: bool) -> Bytes {
        let mut text = std::mem::take(&mut self.held);
        text.extend_from_slice(chunk);
        let mut out = Vec::with_capacity(text.len());
        let n = self.secret.len();
        let mut i = 0;
        while i < text.len() {
            if n > 0 && text[i..].starts_with(&self.secret) {
                i += n;
            } else {
                out.push(text[i]);
                i += 1;
            }
        }
        if !last {
            // a secret's first n-1 bytes may end this chunk
            let keep = out.len().min(n.saturating_sub(1));
            self.held = out.split_off(out.len() - keep);
        }
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(secret: &str, chunks: &[&str]) -> String {
        let mut s = Scrubber::new(secret.as_bytes().to_vec());
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend_from_slice(&s.feed(chunk.as_bytes(), false));
        }
        out.extend_from_slice(&s.feed(&[], true));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_secret_is_gone_wherever_the_chunks_split_it() {
        let page = r#"{"token": "s3cr3t", "other": "s3cr3", "again": "s3cr3ts3cr3t"}"#;
        let want = r#"{"token": "", "other": "s3cr3", "again": ""}"#;
        for a in 0..=page.len() {
            for b in a..=page.len() {
                assert_eq!(through("s3cr3t", &[&page[..a], &page[a..b], &page[b..]]), want, "split at {a}, {b}");
            }
        }
    }

    #[test]
    fn a_body_without_it_passes_unchanged() {
        assert_eq!(through("s3cr3t", &["plain ", "", "bytes s3cr3"]), "plain bytes s3cr3");
        assert_eq!(through("s3cr3t", &[]), "");
    }
}
