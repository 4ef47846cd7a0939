//! The university's directory over LDAP (`ldap3`): a person's entry, their
//! `uidNumber`/`gidNumber` and the `cn`s of their groups (`posixGroup`
//! with `memberUid`, `groupOfNames` with `member`), read through the
//! service's read-only bind. One connection per look-up: sign-ins are
//! rare next to API calls, and a pooled connection would need its own
//! health checks. Every value that goes into a filter is escaped (RFC
//! 4515), so a name like `*)(uid=*` matches nobody.
//!
//! A person's password (#44: campuses with a directory and no OpenID
//! provider) is checked by binding as them, on a connection of its own,
//! and never kept. It travels only over TLS (`ldaps://` or StartTLS) or to
//! this machine; an empty one is refused before the directory is asked
//! (an LDAP bind with a name and no password is "unauthenticated" and
//! succeeds: RFC 4513 §5.1.2).

use std::time::Duration;

use ldap3::{ldap_escape, LdapConnAsync, LdapConnSettings, Scope, SearchEntry};

use crate::config::LdapSettings;

/// Longest a directory may take to answer (connect, bind, each search).
const TIMEOUT: Duration = Duration::from_secs(5);

/// A person as the directory lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct Person {
    pub dn: String,
    pub uid_number: Option<i64>,
    pub gid_number: Option<i64>,
    /// The `cn`s of the groups they are in, sorted.
    pub groups: Vec<String>,
    /// The `gidNumber`s of those groups that have one (posixGroups),
    /// sorted: the supplementary groups their jobs run with.
    pub group_gids: Vec<i64>,
    /// Each of those groups' `cn` with its `gidNumber`, sorted: a lab
    /// group's gid is its share's group (policy §13).
    pub named_gids: Vec<(String, i64)>,
}

#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    #[error("the directory cannot be reached or refused the service's bind: {0}")]
    Unavailable(String),
    /// Two entries answer to one name: nobody may sign in as either.
    #[error("the directory lists {0} entries for this name")]
    Ambiguous(usize),
    #[error("the directory is misconfigured: {0}")]
    Config(String),
    /// A person's password would cross the network in clear.
    #[error("passwords are not sent to {0} without TLS: use an ldaps:// URL or set directory.ldap.starttls")]
    Cleartext(String),
}

pub struct Directory {
    settings: LdapSettings,
    bind_password: String,
    /// `lab_group`, compiled once (checked at start-up).
    lab_group: regex::Regex,
}

impl Directory {
    async fn connect(&self) -> Result<ldap3::Ldap, DirectoryError> {
        let conn_settings = LdapConnSettings::new().set_conn_timeout(TIMEOUT).set_starttls(self.settings.starttls);
        let (conn, ldap) = LdapConnAsync::with_settings(conn_settings, &self.settings.url)
            .await
            .map_err(|e| DirectoryError::Unavailable(e.to_string()))?;
        ldap3::drive!(conn);
        Ok(ldap)
    }

    /// Whether a person's password may be sent: over TLS, or to loopback.
    pub fn passwords_travel_safely(&self) -> Result<(), DirectoryError> {
        let url = self.settings.url.trim();
        let loopback = url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_string)).is_some_and(|host| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
        });
        if url.starts_with("ldaps://") || url.starts_with("ldapi://") || self.settings.starttls || loopback {
            return Ok(());
        }
        Err(DirectoryError::Cleartext(url.to_string()))
    }

    /// The person named `username` when `password` is theirs (a bind as
    /// their entry succeeds); `None` for a name the directory does not
    /// list and for a wrong password alike.
    pub async fn check_password(&self, username: &str, password: &str) -> Result<Option<Person>, DirectoryError> {
        self.passwords_travel_safely()?;
        if password.is_empty() {
            return Ok(None);
        }
        let Some(person) = self.person(username).await? else { return Ok(None) };
        let mut ldap = self.connect().await?;
        ldap.with_timeout(TIMEOUT);
        let answer =
            ldap.simple_bind(&person.dn, password).await.map_err(|e| DirectoryError::Unavailable(e.to_string()))?;
        let _ = ldap.unbind().await;
        match answer.rc {
            0 => Ok(Some(person)),
            // invalidCredentials; anything else (a locked account, a
            // policy's refusal) is a refusal too, noted for the operator
            49 => Ok(None),
            rc => {
                tracing::info!(user = %username, rc, text = %answer.text, "the directory refused a person's bind");
                Ok(None)
            }
        }
    }

    /// The directory, or `None` when no URL is set; the bind password is
    /// read once, here.
    pub fn from_settings(settings: &LdapSettings) -> Result<Option<Self>, DirectoryError> {
        if settings.url.trim().is_empty() {
            return Ok(None);
        }
        let config = |m: String| DirectoryError::Config(m);
        if !settings.user_filter.contains("{username}") {
            return Err(config("directory.ldap.user_filter must contain {username}".into()));
        }
        if settings.user_base.is_empty() || settings.group_base.is_empty() {
            return Err(config("directory.ldap.user_base and group_base must be set".into()));
        }
        let lab_group = crate::auth::oidc::lab_pattern(&settings.lab_group).map_err(|e| config(e.to_string()))?;
        let bind_password = match &settings.bind_password_file {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| config(format!("directory.ldap.bind_password_file {}: {e}", path.display())))?
                .trim_end_matches(['\n', '\r'])
                .to_string(),
            None => String::new(),
        };
        Ok(Some(Self { settings: settings.clone(), bind_password, lab_group }))
    }

    pub fn settings(&self) -> &LdapSettings {
        &self.settings
    }

    pub fn lab_group(&self) -> &regex::Regex {
        &self.lab_group
    }

    /// The person named `username`, or `None` when the directory does
    /// not list them.
    pub async fn person(&self, username: &str) -> Result<Option<Person>, DirectoryError> {
        let down = |e: ldap3::LdapError| DirectoryError::Unavailable(e.to_string());
        let mut ldap = self.connect().await?;
        ldap.with_timeout(TIMEOUT);
        ldap.simple_bind(&self.settings.bind_dn, &self.bind_password).await.map_err(down)?.success().map_err(down)?;

        let filter = self.settings.user_filter.replace("{username}", &ldap_escape(username));
        ldap.with_timeout(TIMEOUT);
        let (found, _) = ldap
            .search(&self.settings.user_base, Scope::Subtree, &filter, vec!["uid", "uidNumber", "gidNumber"])
            .await
            .map_err(down)?
            .success()
            .map_err(down)?;
        let entry = match found.len() {
            0 => {
                let _ = ldap.unbind().await;
                return Ok(None);
            }
            1 => SearchEntry::construct(found.into_iter().next().expect("one entry")),
            n => {
                let _ = ldap.unbind().await;
                return Err(DirectoryError::Ambiguous(n));
            }
        };
        // directories match `uid` regardless of case: `KIM` would be
        // kim's entry; a name is a person's only as the entry spells it
        if entry.attrs.get("uid").is_some_and(|uids| !uids.iter().any(|u| u == username)) {
            let _ = ldap.unbind().await;
            return Ok(None);
        }
        let number = |name: &str| entry.attrs.get(name).and_then(|v| v.first()).and_then(|n| n.parse().ok());
        let groups_filter = format!(
            "(|(&(objectClass=posixGroup)(memberUid={uid}))(&(objectClass=groupOfNames)(member={dn})))",
            uid = ldap_escape(username),
            dn = ldap_escape(entry.dn.as_str())
        );
        ldap.with_timeout(TIMEOUT);
        let (groups, _) = ldap
            .search(&self.settings.group_base, Scope::Subtree, &groups_filter, vec!["cn", "gidNumber"])
            .await
            .map_err(down)?
            .success()
            .map_err(down)?;
        let _ = ldap.unbind().await;
        let groups: Vec<SearchEntry> = groups.into_iter().map(SearchEntry::construct).collect();
        let first = |g: &SearchEntry, name: &str| g.attrs.get(name).and_then(|v| v.first().cloned());
        let mut group_gids: Vec<i64> =
            groups.iter().filter_map(|g| first(g, "gidNumber")).filter_map(|n| n.parse().ok()).collect();
        group_gids.sort();
        group_gids.dedup();
        let mut named_gids: Vec<(String, i64)> =
            groups.iter().filter_map(|g| Some((first(g, "cn")?, first(g, "gidNumber")?.parse().ok()?))).collect();
        named_gids.sort();
        let mut groups: Vec<String> = groups.iter().filter_map(|g| first(g, "cn")).collect();
        groups.sort();
        groups.dedup();
        Ok(Some(Person {
            uid_number: number("uidNumber"),
            gid_number: number("gidNumber"),
            dn: entry.dn.clone(),
            groups,
            group_gids,
            named_gids,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_go_only_over_tls_or_to_this_machine() {
        let directory = |url: &str, starttls: bool| Directory {
            settings: LdapSettings { url: url.into(), starttls, ..Default::default() },
            bind_password: String::new(),
            lab_group: regex::Regex::new("(x)").unwrap(),
        };
        for (url, starttls, safe) in [
            ("ldap://127.0.0.1:389", false, true),
            ("ldap://localhost", false, true),
            ("ldap://[::1]:389", false, true),
            ("ldaps://ldap.example.edu", false, true),
            ("ldap://ldap.example.edu", true, true),
            ("ldap://ldap.example.edu", false, false),
            ("ldap://127.0.0.1.example.edu", false, false),
            ("ldap://10.0.0.5:389", false, false),
        ] {
            assert_eq!(directory(url, starttls).passwords_travel_safely().is_ok(), safe, "{url} starttls={starttls}");
        }
    }
}
