//! Where a webhook may go. A researcher's URL is hostile until proven
//! harmless: http(s) only, no credentials in it, and never a link-local
//! or cloud-metadata address (the server's own cloud credentials live
//! there), checked on every address its host resolves to — when the URL
//! is set and again at each delivery, which then connects to the very
//! address it checked (a name that re-resolves elsewhere gains nothing).
//! Admins may restrict targets further (`notify.webhook_allow`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::IpNet;
use reqwest::Url;

/// The longest a webhook's host may take to resolve.
const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The most characters a webhook URL may have.
pub const MAX_URL_CHARS: usize = 2048;

/// Host names that are metadata services whatever they resolve to.
const METADATA_NAMES: &[&str] = &["metadata.google.internal", "metadata.goog", "metadata"];

/// A URL that passed the checks that need no DNS.
#[derive(Debug, Clone)]
pub struct WebhookUrl {
    pub url: Url,
    pub host: String,
    pub port: u16,
}

/// http(s), a host, no user or password, at most [`MAX_URL_CHARS`].
pub fn parse(text: &str) -> Result<WebhookUrl, String> {
    if text.chars().count() > MAX_URL_CHARS {
        return Err(format!("must be at most {MAX_URL_CHARS} characters"));
    }
    let url = Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("must be http or https, not {}", url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user name or password (deliveries are listed with their URL)".into());
    }
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_ascii_lowercase(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => a.to_string(),
        None => return Err("must name a host".into()),
    };
    if METADATA_NAMES.contains(&host.as_str()) {
        return Err(format!("`{host}` is a cloud metadata service"));
    }
    let port = url.port_or_known_default().ok_or("must name a port")?;
    Ok(WebhookUrl { url, host, port })
}

/// Never a webhook target: link-local (cloud metadata services live at
/// 169.254.169.254 and fd00:ec2::254), unspecified, broadcast, multicast,
/// and the metadata addresses of clouds that use others.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(a) if a.is_link_local() => Some("a link-local address"),
        IpAddr::V4(a) if a == Ipv4Addr::new(100, 100, 100, 200) => Some("a cloud metadata address"),
        IpAddr::V4(a) if a.is_unspecified() || a.is_broadcast() || a.is_multicast() => Some("not a host address"),
        IpAddr::V6(a) if (a.segments()[0] & 0xffc0) == 0xfe80 => Some("a link-local address"),
        IpAddr::V6(a) if a == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) => Some("a cloud metadata address"),
        IpAddr::V6(a) if a.is_unspecified() || a.is_multicast() => Some("not a host address"),
        _ => None,
    }
}

/// An admin's allow list: host names (`.example.edu` = the domain and its
/// subdomains) and address ranges.
#[derive(Debug, Clone, Default)]
pub struct AllowList {
    hosts: Vec<String>,
    nets: Vec<IpNet>,
}

impl AllowList {
    pub fn new(entries: &[String]) -> Self {
        let mut list = AllowList::default();
        for e in entries.iter().map(|e| e.trim().to_ascii_lowercase()).filter(|e| !e.is_empty()) {
            match e.parse::<IpNet>().or_else(|_| e.parse::<IpAddr>().map(IpNet::from)) {
                Ok(net) => list.nets.push(net),
                Err(_) => list.hosts.push(e),
            }
        }
        list
    }

    fn is_open(&self) -> bool {
        self.hosts.is_empty() && self.nets.is_empty()
    }

    fn host_allowed(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| match h.strip_prefix('.') {
            Some(domain) => host == domain || host.ends_with(h.as_str()),
            None => host == h,
        })
    }

    fn address_allowed(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|n| n.contains(&ip))
    }
}

/// Resolves the URL's host and checks every address; answers the one to
/// connect to.
pub async fn resolve(target: &WebhookUrl, allow: &AllowList) -> Result<SocketAddr, String> {
    let lookup = tokio::net::lookup_host((target.host.as_str(), target.port));
    let addrs: Vec<SocketAddr> = tokio::time::timeout(RESOLVE_TIMEOUT, lookup)
        .await
        .map_err(|_| format!("`{}` did not resolve within {} s", target.host, RESOLVE_TIMEOUT.as_secs()))?
        .map_err(|e| format!("cannot resolve `{}`: {e}", target.host))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("`{}` resolves to no address", target.host));
    }
    for a in &addrs {
        if let Some(why) = forbidden(a.ip()) {
            return Err(format!("`{}` resolves to {}, {why}", target.host, a.ip()));
        }
    }
    if !allow.is_open() && !allow.host_allowed(&target.host) && !addrs.iter().all(|a| allow.address_allowed(a.ip())) {
        return Err(format!(
            "`{}` is not among the webhook targets this server allows (notify.webhook_allow)",
            target.host
        ));
    }
    Ok(addrs[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_urls_without_credentials() {
        assert!(parse("https://hooks.example.edu/x?y=1").is_ok());
        assert_eq!(parse("http://127.0.0.1:8080/hook").unwrap().port, 8080);
        let table = [
            ("ftp://example.edu/", "http or https"),
            ("file:///etc/passwd", "http or https"),
            ("gopher://x/", "http or https"),
            ("https://user:pw@example.edu/", "user name or password"),
            ("not a url", "not a URL"),
            ("http://metadata.google.internal/computeMetadata/v1/", "metadata"),
        ];
        for (url, says) in table {
            let e = parse(url).unwrap_err();
            assert!(e.contains(says), "{url}: {e}");
        }
        assert!(parse(&format!("https://e.edu/{}", "a".repeat(MAX_URL_CHARS))).is_err());
    }

    #[test]
    fn link_local_and_metadata_addresses_are_never_targets() {
        let refused = [
            "169.254.169.254",
            "169.254.0.1",
            "fe80::1",
            "fd00:ec2::254",
            "100.100.100.200",
            "0.0.0.0",
            "::ffff:169.254.169.254",
            "224.0.0.1",
        ];
        for ip in refused {
            assert!(forbidden(ip.parse().unwrap()).is_some(), "{ip}");
        }
        for ip in ["127.0.0.1", "10.1.2.3", "192.168.0.10", "8.8.8.8", "::1", "2001:db8::1"] {
            assert!(forbidden(ip.parse().unwrap()).is_none(), "{ip}");
        }
    }

    #[tokio::test]
    async fn an_allow_list_restricts_by_name_or_range() {
        let list = AllowList::new(&[".example.edu".into(), "10.20.0.0/16".into()]);
        assert!(list.host_allowed("hooks.example.edu") && list.host_allowed("example.edu"));
        assert!(!list.host_allowed("badexample.edu"));
        let local = parse("http://127.0.0.1:9/").unwrap();
        let e = resolve(&local, &list).await.unwrap_err();
        assert!(e.contains("notify.webhook_allow"), "{e}");
        assert!(resolve(&local, &AllowList::new(&["127.0.0.0/8".into()])).await.is_ok());
        assert!(resolve(&local, &AllowList::default()).await.is_ok(), "no list: any host address");
        let metadata = parse("http://169.254.169.254/latest/meta-data/").unwrap();
        assert!(resolve(&metadata, &AllowList::new(&["169.254.0.0/16".into()]))
            .await
            .unwrap_err()
            .contains("link-local"));
    }
}
