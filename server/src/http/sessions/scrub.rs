//! Keeps an app's token out of what reaches the browser. On Slurm the
//! proxy authenticates to the app with a token (app.rs says why), and
//! JupyterLab writes the token it runs with into its `/lab` page's
//! config — from where any script on the page, or anything the browser
//! keeps, could carry it to someone on the cluster who can reach the
//! node's port. So every response body from such an app is streamed
//! through [`Scrubbed`], which drops each occurrence of the token, also
//! across chunk boundaries. Requests to the app ask for no compression,
//! so the token cannot hide inside gzip; the site's own compression
//! layer compresses the scrubbed body afterwards.
//!
//! [`Scrubbed`] is an `http_body::Body` of its own rather than a stream
//! turned into one: a body is polled again after it has ended (the
//! compression layer does, looking for trailers), and the stream this
//! replaced panicked when it was (`Unfold must not be polled after it
//! returned Poll::Ready(None)`: every browser got an empty response).
//! Once ended, a `Scrubbed` answers `None` however often it is asked.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use axum::body::Body;
use hyper::body::{Body as HttpBody, Bytes, Frame};

/// `body`, with every occurrence of `token` removed.
pub fn scrub(body: Body, token: String) -> Body {
    Body::new(Scrubbed { inner: body, scrubber: Scrubber::new(token.into_bytes()), trailers: None, done: false })
}

/// The body [`scrub`] makes.
struct Scrubbed {
    inner: Body,
    scrubber: Scrubber,
    /// The app's trailers, sent after the bytes held back before them.
    trailers: Option<Frame<Bytes>>,
    done: bool,
}

impl HttpBody for Scrubbed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        loop {
            if let Some(trailers) = this.trailers.take() {
                this.done = true;
                return Poll::Ready(Some(Ok(trailers)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(chunk) => {
                        let out = this.scrubber.feed(&chunk, false);
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(out))));
                        }
                    }
                    Err(trailers) => {
                        this.trailers = Some(trailers);
                        let out = this.scrubber.feed(&[], true);
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(out))));
                        }
                    }
                },
                Some(Err(e)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
                None => {
                    this.done = true;
                    let out = this.scrubber.feed(&[], true);
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(out))));
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done && self.trailers.is_none()
    }
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
    use std::io::Read;

    use axum::http::{header, HeaderMap, Request, Response};
    use http_body_util::BodyExt;
    use tower::{Layer, ServiceExt};

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

    fn chunked(parts: Vec<String>) -> Body {
        Body::from_stream(futures_util::stream::iter(parts.into_iter().map(Ok::<_, std::io::Error>)))
    }

    #[tokio::test]
    async fn an_ended_body_stays_ended_however_often_it_is_polled() {
        let mut body = scrub(chunked(vec!["a s3c".into(), "r3t b".into()]), "s3cr3t".into());
        let mut seen = Vec::new();
        while let Some(frame) = body.frame().await {
            seen.extend_from_slice(&frame.unwrap().into_data().unwrap());
        }
        assert_eq!(seen, b"a  b");
        assert!(body.is_end_stream());
        for _ in 0..3 {
            assert!(body.frame().await.is_none(), "polled again after its end");
        }
    }

    fn decode(encoding: &str, bytes: &[u8]) -> String {
        let mut text = String::new();
        match encoding {
            "gzip" => flate2::read::GzDecoder::new(bytes).read_to_string(&mut text).unwrap(),
            "br" => brotli::Decompressor::new(bytes, 4096).read_to_string(&mut text).unwrap(),
            other => panic!("unexpected encoding {other}"),
        };
        text
    }

    /// What every browser does: ask for gzip or brotli. The site's
    /// compression layer then reads the scrubbed body to its end and
    /// past it (this is where the old body panicked).
    #[tokio::test]
    async fn a_scrubbed_body_passes_the_compression_layer_wherever_the_chunks_split_the_token() {
        let token = "0123456789abcdef0123456789abcdef0123456789abcdef";
        let page = format!(
            "<html><script id=\"jupyter-config-data\">{{\"token\": \"{token}\", \"baseUrl\": \"/s/7/\"}}</script>\
             <p>{}</p></html>",
            "padding so that the layer compresses it ".repeat(8)
        );
        let want = page.replace(token, "");
        let start = page.find(token).unwrap();
        // two chunks cut at every offset of the token, and one byte a chunk
        let mut splits: Vec<Vec<String>> = (0..=token.len())
            .map(|cut| vec![page[..start + cut].to_string(), page[start + cut..].to_string()])
            .collect();
        splits.push(page.chars().map(String::from).collect());
        for accept in ["gzip", "br", "gzip, deflate, br, zstd"] {
            for (i, parts) in splits.iter().enumerate() {
                let parts = parts.clone();
                let service = tower_http::compression::CompressionLayer::new().layer(tower::service_fn(
                    move |_req: Request<Body>| {
                        let parts = parts.clone();
                        async move {
                            let mut resp = Response::new(scrub(chunked(parts), token.to_string()));
                            resp.headers_mut().insert(header::CONTENT_TYPE, "text/html".parse().unwrap());
                            Ok::<_, std::convert::Infallible>(resp)
                        }
                    },
                ));
                let req = Request::builder()
                    .uri("/s/7/lab")
                    .header(header::ACCEPT_ENCODING, accept)
                    .body(Body::empty())
                    .unwrap();
                let resp = service.oneshot(req).await.unwrap();
                let headers: HeaderMap = resp.headers().clone();
                let encoding = headers[header::CONTENT_ENCODING].to_str().unwrap().to_string();
                assert!(accept.contains(&encoding), "{accept} → {encoding}");
                let bytes = resp.into_body().collect().await.expect("the whole body, no panic").to_bytes();
                let text = decode(&encoding, &bytes);
                assert_eq!(text, want, "{accept}, split {i}");
            }
        }
    }
}
