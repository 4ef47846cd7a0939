//! A workspace build's only way out (#42 W2): an HTTP `CONNECT` proxy on
//! a Unix socket that opens tunnels to the package registries and nothing
//! else (`workspaces.registries`). The build runs in a network namespace
//! with only loopback; the relay `enter` forks there joins it to this
//! socket. A tunnel is refused when the host and port are not listed, and
//! when a listed name resolves to this machine or its link (loopback,
//! link-local, unspecified): a registry name must not become a way to the
//! server's own API or a neighbour's metadata service. An address listed
//! as such (`10.0.0.5:3141`, a campus mirror) is taken as given. Refusals
//! go into the build's log, so the researcher sees what was kept out.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

/// Tunnels one build may hold open at once.
const MAX_TUNNELS: usize = 32;
/// A request head longer than this is refused.
const MAX_HEAD: usize = 8 * 1024;
/// Lines of refusals written into one build's log.
const MAX_LOGGED: u32 = 50;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The hosts (and ports) a build may reach.
#[derive(Debug, Clone, PartialEq)]
pub struct Registries(Vec<(String, u16)>);

impl Registries {
    /// `host` (port 443), `host:port`, or `.suffix` for every name under
    /// it; lower-cased.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.trim().to_ascii_lowercase();
            let (host, port) = split_host_port(&entry)
                .ok_or_else(|| format!("workspaces.registries: `{entry}` is not HOST, HOST:PORT or .DOMAIN"))?;
            out.push((host.to_string(), port));
        }
        Ok(Self(out))
    }

    fn allows(&self, host: &str, port: u16) -> bool {
        self.0.iter().any(|(listed, p)| {
            *p == port && (listed == host || (listed.starts_with('.') && host.ends_with(listed.as_str())))
        })
    }
}

/// `host:port` (443 without one); a bracketed IPv6 address; plain names.
fn split_host_port(target: &str) -> Option<(&str, u16)> {
    let (host, port) = match target.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') || h.ends_with(']') => (h, p.parse().ok()?),
        _ => (target, 443),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let plain = |c: char| c.is_ascii_alphanumeric() || ".-:".contains(c);
    (!host.is_empty() && host.len() <= 253 && host.chars().all(plain) && port != 0).then_some((host, port))
}

/// The proxy for one build; it stops when dropped.
pub struct Egress(tokio::task::JoinHandle<()>);

impl Drop for Egress {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Listens on `socket` (owned by `owner`, who alone may connect) for the
/// build whose log is `log`.
pub fn open(socket: &Path, owner: Option<u32>, registries: Registries, log: std::fs::File) -> std::io::Result<Egress> {
    let _ = std::fs::remove_file(socket);
    let listener = UnixListener::bind(socket)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    if let Some(uid) = owner {
        std::os::unix::fs::chown(socket, Some(uid), Some(uid))?;
    }
    let registries = Arc::new(registries);
    let log = Arc::new(Mutex::new((log, 0u32)));
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_TUNNELS));
    Ok(Egress(tokio::spawn(async move {
        // the tunnels are this task's: they end with it, when the build does
        let mut tunnels = tokio::task::JoinSet::new();
        while let Ok((stream, _)) = listener.accept().await {
            while tunnels.try_join_next().is_some() {}
            let Ok(slot) = slots.clone().try_acquire_owned() else { continue };
            let (registries, log) = (registries.clone(), log.clone());
            tunnels.spawn(async move {
                if let Err(why) = tunnel(stream, &registries).await {
                    note(&log, &why);
                }
                drop(slot);
            });
        }
    })))
}

fn note(log: &Mutex<(std::fs::File, u32)>, why: &str) {
    let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
    log.1 += 1;
    if log.1 <= MAX_LOGGED {
        let _ = writeln!(log.0, "[jpu-share] {why}");
    }
}

/// One connection: a `CONNECT host:port` head, checked, then the tunnel.
async fn tunnel(mut stream: UnixStream, registries: &Registries) -> Result<(), String> {
    let head = match tokio::time::timeout(CONNECT_TIMEOUT, read_head(&mut stream)).await {
        Ok(Some(head)) => head,
        _ => return refuse(&mut stream, "400 Bad Request", "a connection that sent no proxy request was closed").await,
    };
    let first = head.lines().next().unwrap_or_default();
    let mut words = first.split(' ');
    let (Some("CONNECT"), Some(target)) = (words.next(), words.next()) else {
        let why = "the build asked the proxy for something other than a CONNECT tunnel (registries are HTTPS): refused";
        return refuse(&mut stream, "405 Method Not Allowed", why).await;
    };
    let target = target.to_ascii_lowercase();
    let Some((host, port)) = split_host_port(&target) else {
        return refuse(&mut stream, "400 Bad Request", "the build's tunnel names no host: refused").await;
    };
    let shown: String = target.chars().take(100).collect();
    if !registries.allows(host, port) {
        let why =
            format!("the build's connection to {shown} was refused: not a package registry (workspaces.registries)");
        return refuse(&mut stream, "403 Forbidden", &why).await;
    }
    let literal = host.parse::<IpAddr>().is_ok();
    let addresses: Vec<SocketAddr> = match tokio::net::lookup_host((host, port)).await {
        Ok(found) => found.filter(|a| literal || !local(a.ip())).collect(),
        Err(_) => Vec::new(),
    };
    let Some(address) = addresses.first() else {
        let why =
            format!("the build's connection to {shown} was refused: it resolves to no address outside this machine");
        return refuse(&mut stream, "502 Bad Gateway", &why).await;
    };
    let mut upstream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
        Ok(Ok(upstream)) => upstream,
        _ => return refuse(&mut stream, "502 Bad Gateway", &format!("{shown} could not be reached")).await,
    };
    stream.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.map_err(|e| e.to_string())?;
    let _ = tokio::io::copy_bidirectional(&mut stream, &mut upstream).await;
    Ok(())
}

/// The request head up to its blank line, if it comes whole and short.
async fn read_head(stream: &mut UnixStream) -> Option<String> {
    let mut head = Vec::with_capacity(512);
    let mut byte = [0u8; 1];
    // byte by byte: nothing past the head may be read (it is the tunnel's)
    while head.len() < MAX_HEAD {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
        if head.ends_with(b"\r\n\r\n") {
            return String::from_utf8(head).ok();
        }
    }
    None
}

async fn refuse(stream: &mut UnixStream, status: &str, why: &str) -> Result<(), String> {
    let _ = stream.write_all(format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n").as_bytes()).await;
    Err(why.to_string())
}

/// This machine, its link, or nowhere.
fn local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_link_local() || v4.is_unspecified() || v4.is_broadcast(),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| local(IpAddr::V4(v4)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_hosts_and_ports_pass() {
        let regs =
            Registries::parse(&["PyPI.org".into(), "mirror.campus.edu:3141".into(), ".docker.io".into()]).unwrap();
        // (host, port, allowed)
        let table = [
            ("pypi.org", 443, true),
            ("pypi.org", 80, false),
            ("evilpypi.org", 443, false),
            ("pypi.org.evil.com", 443, false),
            ("mirror.campus.edu", 3141, true),
            ("mirror.campus.edu", 443, false),
            ("registry-1.docker.io", 443, true),
            ("docker.io", 443, false),
            ("evildocker.io", 443, false),
        ];
        for (host, port, allowed) in table {
            assert_eq!(regs.allows(host, port), allowed, "{host}:{port}");
        }
        assert!(Registries::parse(&["pypi.org:0".into()]).is_err());
        assert!(Registries::parse(&["pypi.org/simple".into()]).is_err());
    }

    #[test]
    fn targets_split_into_host_and_port() {
        assert_eq!(split_host_port("pypi.org:443"), Some(("pypi.org", 443)));
        assert_eq!(split_host_port("pypi.org"), Some(("pypi.org", 443)));
        assert_eq!(split_host_port("[::1]:8080"), Some(("::1", 8080)));
        assert_eq!(split_host_port("a b:443"), None);
        assert_eq!(split_host_port(":443"), None);
        assert_eq!(split_host_port("host:99999"), None);
    }

    #[test]
    fn names_resolving_here_are_local() {
        for ip in ["127.0.0.1", "169.254.169.254", "0.0.0.0", "::1", "fe80::1", "::ffff:127.0.0.1"] {
            assert!(local(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["10.0.0.5", "151.101.0.223", "2a04:4e42::223"] {
            assert!(!local(ip.parse().unwrap()), "{ip}");
        }
    }
}
