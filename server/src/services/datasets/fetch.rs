//! Fetching a dataset by URL (policy §13), with the server's network
//! (jobs stay offline). The URL is hostile whoever typed it: http(s) only,
//! no credentials; every address its host resolves to is checked (never
//! link-local or a metadata service; never loopback or the site's private
//! network unless `storage.fetch_private_addresses`), and the connection
//! goes to the very address checked. A redirect is followed only after
//! the same checks on its target, five at most. The body is streamed to
//! disk and cut off past `storage.max_dataset_gb`, its SHA-256 taken on
//! the way and compared with the one given.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::services::notifications::targets::{self, AllowList};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// The longest a fetch may go without a byte.
const READ_TIMEOUT: Duration = Duration::from_secs(120);
const MAX_REDIRECTS: usize = 5;

/// What came down.
pub struct Downloaded {
    pub bytes: u64,
    pub sha256: String,
    /// The URL's path after redirects (its name says what it is).
    pub url_path: String,
}

/// Every address allowed when the site lets fetches reach its own network.
fn allow_list(private_addresses: bool) -> AllowList {
    if private_addresses {
        AllowList::new(&["0.0.0.0/0".into(), "::/0".into()])
    } else {
        AllowList::default()
    }
}

/// A URL as a request or an admin gives it: checked without the network.
pub fn check_url(url: &str) -> Result<(), String> {
    targets::parse(url).map(|_| ()).map_err(|m| m.to_string())
}

/// Downloads `url` to `to`, at most `max` bytes.
pub async fn download(url: &str, to: &Path, max: u64, private_addresses: bool) -> Result<Downloaded, String> {
    let allow = allow_list(private_addresses);
    let mut current = url.to_string();
    for _ in 0..=MAX_REDIRECTS {
        let target = targets::parse(&current).map_err(|m| m.to_string())?;
        let addr = targets::resolve(&target, &allow).await.map_err(|m| m.to_string())?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // straight to the address checked: a proxy would resolve the
            // name again itself
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .resolve(&target.host, addr)
            .user_agent("JPU-Share-Datasets")
            .build()
            .map_err(|e| format!("fetch client: {e}"))?;
        let answer =
            client.get(target.url.clone()).send().await.map_err(|e| format!("{}: {}", target.host, e.without_url()))?;
        let status = answer.status();
        if status.is_redirection() {
            let next = answer
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| target.url.join(l).ok())
                .ok_or_else(|| format!("HTTP {} without a usable Location", status.as_u16()))?;
            current = next.to_string();
            continue;
        }
        if !status.is_success() {
            return Err(format!("the server answered HTTP {}", status.as_u16()));
        }
        if answer.content_length().is_some_and(|n| n > max) {
            return Err(too_large(max));
        }
        let url_path = target.url.path().to_string();
        let (bytes, sha256) = save(answer, to, max).await?;
        return Ok(Downloaded { bytes, sha256, url_path });
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

fn too_large(max: u64) -> String {
    format!("the data is larger than {max} bytes (storage.max_dataset_gb)")
}

async fn save(answer: reqwest::Response, to: &Path, max: u64) -> Result<(u64, String), String> {
    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)
        .await
        .map_err(|e| format!("cannot write the download: {e}"))?;
    let mut hasher = Sha256::new();
    let mut bytes = 0u64;
    let mut answer = answer;
    while let Some(chunk) = answer.chunk().await.map_err(|e| format!("the download broke off: {}", e.without_url()))? {
        bytes += chunk.len() as u64;
        if bytes > max {
            return Err(too_large(max));
        }
        hasher.update(&chunk);
        file.write_all(&chunk).await.map_err(|e| format!("cannot write the download: {e}"))?;
    }
    file.flush().await.map_err(|e| e.to_string())?;
    let sha = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((bytes, sha))
}

/// The file name a plain (not archive) download is kept under: the URL's
/// last path component where it is a plain name, else `data`.
pub fn plain_name(url_path: &str) -> PathBuf {
    let last = url_path.rsplit('/').next().unwrap_or_default();
    let decoded = percent_decoded(last);
    let ok = !decoded.is_empty()
        && decoded != "."
        && decoded != ".."
        && !decoded.contains(['/', '\0'])
        && !decoded.starts_with('.')
        && decoded.len() <= 255;
    PathBuf::from(if ok { decoded } else { "data".into() })
}

fn percent_decoded(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_download_keeps_a_safe_name_only() {
        assert_eq!(plain_name("/files/weights.bin"), PathBuf::from("weights.bin"));
        assert_eq!(plain_name("/files/a%20b.csv"), PathBuf::from("a b.csv"));
        for bad in ["/files/", "/files/..", "/x/%2e%2e", "/x/a%2Fb", "/x/.hidden", "/x/%00"] {
            assert_eq!(plain_name(bad), PathBuf::from("data"), "{bad}");
        }
    }

    #[tokio::test]
    async fn loopback_and_metadata_urls_are_refused_unless_the_site_allows_its_own_network() {
        let dir = tempfile::tempdir().unwrap();
        let e = download("http://127.0.0.1:9/x.tar", &dir.path().join("a"), 10, false).await.err().unwrap();
        assert!(e.contains("127.0.0.1"), "{e}");
        let e = download("http://169.254.169.254/latest/", &dir.path().join("b"), 10, true).await.err().unwrap();
        assert!(e.contains("link-local"), "{e}");
        let e = download("file:///etc/passwd", &dir.path().join("c"), 10, true).await.err().unwrap();
        assert!(e.contains("http"), "{e}");
    }
}
