//! Where a webhook may go. A researcher's URL is hostile until proven
//! harmless: http(s) only, no credentials in it, never a link-local or
//! cloud-metadata address (the server's own cloud credentials live
//! there), and never an address inside the site's network — loopback,
//! private, CGNAT, unique-local — unless an admin's `notify.webhook_allow`
//! names it: otherwise a researcher could scan and POST inside the
//! university's network from the server. IPv6 forms that embed an IPv4
//! address (mapped, compatible, NAT64, 6to4, Teredo) are judged by the
//! address they embed; decimal, hex and octal IPv4 spellings are parsed
//! to the address they mean before any check. Every address the host
//! resolves to is checked — when the URL is set and again at each
//! delivery, which then connects to the very address it checked (a name
//! that re-resolves elsewhere gains nothing).

use app::{i18n::Msg, msg};
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
pub fn parse(text: &str) -> Result<WebhookUrl, Msg> {
    if text.chars().count() > MAX_URL_CHARS {
        return Err(msg!("err-chars-max", max = MAX_URL_CHARS));
    }
    let url = Url::parse(text.trim()).map_err(|e| msg!("err-not-url", text = text, why = e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(msg!("err-url-scheme", scheme = url.scheme()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(msg!("err-url-credentials"));
    }
    let host = match url.host() {
        Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_ascii_lowercase(),
        Some(url::Host::Ipv4(a)) => a.to_string(),
        Some(url::Host::Ipv6(a)) => a.to_string(),
        None => return Err(msg!("err-url-host")),
    };
    if METADATA_NAMES.contains(&host.as_str()) {
        return Err(msg!("err-url-metadata", host = host));
    }
    let port = url.port_or_known_default().ok_or_else(|| msg!("err-url-port"))?;
    Ok(WebhookUrl { url, host, port })
}

/// The IPv4 address an IPv6 one carries: mapped (`::ffff:a.b.c.d`),
/// compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`, `64:ff9b:1::/48`),
/// 6to4 (`2002:AABB:CCDD::/48`) or Teredo (`2001:0::/32`, the client's
/// address inverted in the last 32 bits).
fn embedded_v4(a: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = a.segments();
    let low = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(low(hi, lo)),
        // ::1 and :: are IPv6's own loopback and unspecified
        [0, 0, 0, 0, 0, 0, hi, lo] if (hi, lo) != (0, 0) && (hi, lo) != (0, 1) => Some(low(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] | [0x64, 0xff9b, 1, _, _, _, hi, lo] => Some(low(hi, lo)),
        [0x2002, hi, lo, ..] => Some(low(hi, lo)),
        [0x2001, 0, _, _, _, _, hi, lo] => Some(low(!hi, !lo)),
        _ => None,
    }
}

/// The address as IPv4 where it carries one.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => embedded_v4(v6).map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}

/// Never a webhook target, whatever the allow list says: link-local
/// (cloud metadata services live at 169.254.169.254 and fd00:ec2::254),
/// unspecified, broadcast, multicast, and the metadata addresses of clouds
/// that use others.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match plain(ip) {
        IpAddr::V4(a) if a.is_link_local() => Some("link-local"),
        IpAddr::V4(a) if a == Ipv4Addr::new(100, 100, 100, 200) => Some("metadata"),
        IpAddr::V4(a) if a.is_unspecified() || a.is_broadcast() || a.is_multicast() || a.octets()[0] == 0 => {
            Some("not-host")
        }
        IpAddr::V6(a) if (a.segments()[0] & 0xffc0) == 0xfe80 => Some("link-local"),
        IpAddr::V6(a) if a == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) => Some("metadata"),
        IpAddr::V6(a) if a.is_unspecified() || a.is_multicast() => Some("not-host"),
        _ => None,
    }
}

/// Inside the site's own network: a target only where the allow list
/// names it.
pub fn internal(ip: IpAddr) -> Option<&'static str> {
    match plain(ip) {
        IpAddr::V4(a) if a.is_loopback() => Some("loopback"),
        IpAddr::V4(a) if a.is_private() => Some("private"),
        // 100.64.0.0/10, carrier-grade NAT
        IpAddr::V4(a) if a.octets()[0] == 100 && (a.octets()[1] & 0xc0) == 64 => Some("cgnat"),
        // 198.18.0.0/15 (benchmarking) and 240.0.0.0/4 (reserved)
        IpAddr::V4(a) if (a.octets()[0] == 198 && (a.octets()[1] & 0xfe) == 18) || a.octets()[0] >= 240 => {
            Some("reserved")
        }
        IpAddr::V6(a) if a.is_loopback() => Some("loopback"),
        IpAddr::V6(a) if (a.segments()[0] & 0xfe00) == 0xfc00 => Some("unique-local"),
        IpAddr::V6(a) if (a.segments()[0] & 0xffc0) == 0xfec0 => Some("site-local"),
        IpAddr::V6(a) if a.segments()[0] == 0x64 && a.segments()[1] == 0xff9b => Some("nat64"),
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
        let plain = plain(ip);
        self.nets.iter().any(|n| n.contains(&ip) || n.contains(&plain))
    }
}

/// Resolves the URL's host and checks every address; answers the one to
/// connect to.
pub async fn resolve(target: &WebhookUrl, allow: &AllowList) -> Result<SocketAddr, Msg> {
    let lookup = tokio::net::lookup_host((target.host.as_str(), target.port));
    let addrs: Vec<SocketAddr> = tokio::time::timeout(RESOLVE_TIMEOUT, lookup)
        .await
        .map_err(|_| msg!("err-resolve-slow", host = &target.host, secs = RESOLVE_TIMEOUT.as_secs()))?
        .map_err(|e| msg!("err-resolve-failed", host = &target.host, why = e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(msg!("err-resolve-none", host = &target.host));
    }
    for a in &addrs {
        if let Some(why) = forbidden(a.ip()) {
            return Err(msg!("err-resolve-forbidden", host = &target.host, ip = a.ip().to_string(), kind = why));
        }
        if let Some(why) = internal(a.ip()) {
            if !allow.host_allowed(&target.host) && !allow.address_allowed(a.ip()) {
                return Err(msg!("err-resolve-internal", host = &target.host, ip = a.ip().to_string(), kind = why));
            }
        }
    }
    if !allow.is_open() && !allow.host_allowed(&target.host) && !addrs.iter().all(|a| allow.address_allowed(a.ip())) {
        return Err(msg!("err-resolve-not-allowed", host = &target.host));
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
            let e = parse(url).unwrap_err().to_string();
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
            "0.1.2.3",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
            "224.0.0.1",
        ];
        for ip in refused {
            assert!(forbidden(ip.parse().unwrap()).is_some(), "{ip}");
        }
        for ip in ["127.0.0.1", "10.1.2.3", "8.8.8.8", "::1", "2001:db8::1"] {
            assert!(forbidden(ip.parse().unwrap()).is_none(), "{ip}");
        }
    }

    #[test]
    fn the_sites_own_network_is_internal_in_every_spelling() {
        let inside = [
            "127.0.0.1",
            "127.1.2.3",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.254",
            "192.168.0.10",
            "100.64.0.1",
            "100.127.255.254",
            "198.18.0.1",
            "::1",
            "::ffff:127.0.0.1",
            "::7f00:1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::a00:1",
            "2002:c0a8:1::1",
            "fd12:3456::1",
            "fc00::1",
            "fec0::1",
        ];
        for ip in inside {
            assert!(internal(ip.parse().unwrap()).is_some(), "{ip}");
        }
        // Teredo carries the client's address inverted: 127.0.0.1
        assert!(internal("2001:0:4136:e378:8000:63bf:80ff:fffe".parse().unwrap()).is_some());
        for ip in ["8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "2001:db8::1", "2606:4700::1111"] {
            assert!(internal(ip.parse().unwrap()).is_none(), "{ip}");
        }
        // the URL parser reads every IPv4 spelling as the address it means
        for url in ["http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://0x7f.1/", "http://127.1/"]
        {
            let host = parse(url).unwrap().host;
            assert_eq!(host, "127.0.0.1", "{url}");
        }
    }

    #[tokio::test]
    async fn an_allow_list_restricts_by_name_or_range() {
        let list = AllowList::new(&[".example.edu".into(), "10.20.0.0/16".into()]);
        assert!(list.host_allowed("hooks.example.edu") && list.host_allowed("example.edu"));
        assert!(!list.host_allowed("badexample.edu"));
        let local = parse("http://127.0.0.1:9/").unwrap();
        let e = resolve(&local, &list).await.unwrap_err().to_string();
        assert!(e.contains("notify.webhook_allow"), "{e}");
        assert!(resolve(&local, &AllowList::new(&["127.0.0.0/8".into()])).await.is_ok());
        let e = resolve(&local, &AllowList::default()).await.unwrap_err().to_string();
        assert!(e.contains("loopback") && e.contains("notify.webhook_allow"), "no list: no inside address: {e}");
        let mapped = parse("http://[::ffff:7f00:1]:9/").unwrap();
        assert!(resolve(&mapped, &AllowList::default()).await.is_err());
        assert!(resolve(&mapped, &AllowList::new(&["127.0.0.1".into()])).await.is_ok(), "judged as 127.0.0.1");
        let metadata = parse("http://169.254.169.254/latest/meta-data/").unwrap();
        assert!(resolve(&metadata, &AllowList::new(&["169.254.0.0/16".into()]))
            .await
            .unwrap_err()
            .to_string()
            .contains("link-local"));
        let nat64 = parse("http://[64:ff9b::a9fe:a9fe]/").unwrap();
        assert!(resolve(&nat64, &AllowList::new(&["64:ff9b::/96".into()]))
            .await
            .unwrap_err()
            .to_string()
            .contains("link-local"));
    }
}
