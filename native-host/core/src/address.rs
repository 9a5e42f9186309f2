//! Which network addresses a crawl may reach. A public page must not steer a desktop crawler
//! at the user's router or local services, so targets on loopback, private, link-local and
//! unique-local ranges are refused after name resolution, unless the crawl's own seeds are
//! there or the user allows it (`--allow-private`).

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

/// Where a crawl may connect besides the public internet.
#[derive(Clone, Debug, Default)]
pub struct Reach {
    /// Every address is allowed (the user's `--allow-private`).
    pub allow_private: bool,
    /// Host and port of the crawl's seeds (and its proxy): these may be private. A host name
    /// here may resolve to a private address on any port; an IP literal only on its own port.
    pub seeds: HashSet<(String, u16)>,
}

/// The marker error the resolver gives for a name with only refused addresses.
#[derive(Debug, thiserror::Error)]
#[error("forager refuses private address: {0} resolves only to local or private addresses")]
pub struct PrivateAddress(pub String);

impl Reach {
    /// Adds the host and port of `url` to the allowed seeds.
    pub fn allow_seed(&mut self, url: &url::Url) {
        if let (Some(h), Some(p)) = (url.host_str(), url.port_or_known_default()) {
            self.seeds.insert((h.to_ascii_lowercase(), p));
        }
    }

    /// Whether `url` may be fetched as far as its host is an IP literal (names are checked
    /// when they resolve). Decimal, hex and IPv4-mapped forms arrive here as plain addresses,
    /// as the URL parser normalises them.
    pub fn permits_literal(&self, url: &url::Url) -> bool {
        let ip = match url.host() {
            Some(url::Host::Ipv4(a)) => IpAddr::V4(a),
            Some(url::Host::Ipv6(a)) => IpAddr::V6(a),
            _ => return true,
        };
        if self.allow_private || is_public(ip) {
            return true;
        }
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let port = url.port_or_known_default().unwrap_or(0);
        self.seeds.contains(&(host, port))
    }

    /// Whether the name `host` may resolve to private addresses (it is a seed's host).
    fn name_may_be_private(&self, host: &str) -> bool {
        self.allow_private || self.seeds.iter().any(|(h, _)| h.eq_ignore_ascii_case(host))
    }
}

/// True for addresses on the public internet; false for loopback, private (RFC 1918),
/// shared (RFC 6598), link-local, unique-local, unspecified, broadcast and multicast ones.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => is_public_v4(a),
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(a),
        },
    }
}

fn is_public_v4(a: Ipv4Addr) -> bool {
    let [b0, b1, ..] = a.octets();
    let shared = b0 == 100 && (64..128).contains(&b1);
    !(a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || a.is_unspecified()
        || a.is_broadcast()
        || a.is_multicast()
        || shared
        || b0 == 0)
}

fn is_public_v6(a: Ipv6Addr) -> bool {
    let s0 = a.segments()[0];
    let unique_local = (s0 & 0xfe00) == 0xfc00;
    let link_local = (s0 & 0xffc0) == 0xfe80;
    // ::a.b.c.d (the deprecated IPv4-compatible form) is judged by its IPv4 part.
    let compat = a.segments()[..6].iter().all(|&s| s == 0);
    if compat && !a.is_loopback() && !a.is_unspecified() {
        let o = a.octets();
        return is_public_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    !(a.is_loopback() || a.is_unspecified() || a.is_multicast() || unique_local || link_local)
}

/// A DNS resolver that drops refused addresses, so a name cannot lead the crawler to a local
/// service (checked on the addresses actually connected to, which also defeats rebinding).
pub struct Resolver {
    reach: Arc<Reach>,
}

impl Resolver {
    /// A resolver enforcing `reach`.
    pub fn new(reach: Arc<Reach>) -> Self {
        Resolver { reach }
    }
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let reach = self.reach.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let all: Vec<std::net::SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let open = reach.name_may_be_private(&host);
            let kept: Vec<_> = all
                .into_iter()
                .filter(|a| open || is_public(a.ip()))
                .collect();
            if kept.is_empty() {
                return Err(Box::new(PrivateAddress(host)) as Box<_>);
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> url::Url {
        url::Url::parse(s).unwrap()
    }

    #[test]
    fn local_and_private_ranges_are_not_public() {
        for s in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
        ] {
            assert!(!is_public(s.parse().unwrap()), "{s}");
        }
        for s in ["93.184.216.34", "2606:4700::1", "::ffff:8.8.8.8"] {
            assert!(is_public(s.parse().unwrap()), "{s}");
        }
    }

    #[test]
    fn odd_forms_of_loopback_are_refused_unless_a_seed_is_there() {
        let mut r = Reach::default();
        r.allow_seed(&url("http://127.0.0.1:8000/"));
        for s in [
            "http://127.0.0.1:9000/admin",
            "http://2130706433:9000/",
            "http://0x7f000001:9000/",
            "http://[::ffff:127.0.0.1]:9000/",
            "http://192.168.0.1/",
        ] {
            assert!(!r.permits_literal(&url(s)), "{s}");
        }
        assert!(r.permits_literal(&url("http://127.0.0.1:8000/x")));
        assert!(r.permits_literal(&url("http://0x7f000001:8000/x")));
        assert!(r.permits_literal(&url("http://8.8.8.8/")));
        assert!(
            r.permits_literal(&url("http://example.org/")),
            "names resolve later"
        );
        r.allow_private = true;
        assert!(r.permits_literal(&url("http://127.0.0.1:9000/admin")));
    }
}
