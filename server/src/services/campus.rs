//! Campus sign-in's rules (api.md "Sign-in through the university"): who
//! the provider's answer lets in, and as what. A group matching
//! `lab_group` names the lab (created, audited, when new); `admin_groups`
//! make an admin; nobody without a lab group gets in. The first sign-in
//! creates the user, every sign-in brings lab and role up to date (each
//! change audited, by the actor `oidc`). Jobs keep the lab they were
//! submitted under: only the user's row changes here.

use app::model::{Role, SignIn};

use crate::auth::oidc::Identity;
use crate::clock::now_ms;
use crate::db;
use crate::db::accounts::UserRecord;
use crate::services::{ServiceError, Services};

/// The audit log's actor for changes campus sign-in makes.
const ACTOR: &str = "oidc";

/// Why someone the provider vouched for is not let in (a 403 page).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "{username} is in no lab group of this cluster (groups matching `{pattern}`); ask your lab's head to add you"
    )]
    NoLabGroup { username: String, pattern: String },
    #[error("the account {0} is disabled here; ask an admin")]
    Disabled(String),
    #[error("{0} is a local account of this site: sign in with its password")]
    Local(String),
    #[error(
        "the university's name `{0}` cannot be a user or lab name here (letters, digits, `.`, `_`, `-`; at most 64)"
    )]
    BadName(String),
}

#[derive(Debug, thiserror::Error)]
pub enum CampusError {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl From<sqlx::Error> for CampusError {
    fn from(e: sqlx::Error) -> Self {
        CampusError::Service(e.into())
    }
}

/// The lab and role the groups give. Several lab groups: the user's
/// current lab if it is one of them (no flapping), else the first by name.
pub fn lab_and_role(
    groups: &[String],
    lab_group: &regex::Regex,
    admin_groups: &[String],
    current_lab: Option<&str>,
) -> Option<(String, Role)> {
    let mut labs: Vec<String> = groups
        .iter()
        .filter_map(|g| lab_group.captures(g).and_then(|c| c.get(1)).map(|m| m.as_str().to_string()))
        .filter(|lab| !lab.is_empty())
        .collect();
    labs.sort();
    labs.dedup();
    let lab = match current_lab {
        Some(current) if labs.iter().any(|l| l == current) => current.to_string(),
        _ => labs.into_iter().next()?,
    };
    let role = if groups.iter().any(|g| admin_groups.contains(g)) { Role::Admin } else { Role::Researcher };
    Some((lab, role))
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// Lets the provider's user in: creates or updates them; returns who
/// signed in.
pub async fn sign_in(state: &Services, who: &Identity) -> Result<UserRecord, CampusError> {
    let settings = &state.settings.auth.oidc;
    let pattern =
        crate::auth::oidc::lab_pattern(&settings.lab_group).map_err(|e| ServiceError::Internal(e.to_string()))?;
    if !valid_name(&who.username) {
        return Err(Refusal::BadName(who.username.clone()).into());
    }
    let now = now_ms();
    let mut tx = db::write_tx(&state.db).await?;
    let existing = db::accounts::user_by_username(&mut tx, &who.username).await?;
    if let Some(user) = &existing {
        if user.local {
            return Err(Refusal::Local(user.username.clone()).into());
        }
        if user.disabled {
            return Err(Refusal::Disabled(user.username.clone()).into());
        }
    }
    let Some((lab, role)) =
        lab_and_role(&who.groups, &pattern, &settings.admin_groups, existing.as_ref().map(|u| u.lab.as_str()))
    else {
        return Err(Refusal::NoLabGroup { username: who.username.clone(), pattern: settings.lab_group.clone() }.into());
    };
    if !valid_name(&lab) {
        return Err(Refusal::BadName(lab).into());
    }
    let lab_id = match db::views::lab_id(&mut tx, &lab).await? {
        Some(id) => id,
        None => {
            let id = db::accounts::insert_lab(&mut tx, &lab, now).await?;
            let detail = serde_json::json!({"from_group_of": who.username});
            db::audit::record(&mut tx, ACTOR, "lab.create", Some(&lab), &detail, now).await?;
            id
        }
    };
    let id = match existing {
        None => {
            let new = db::accounts::NewUser {
                username: &who.username,
                password_hash: "",
                lab_id,
                role,
                unix_uid: None,
                max_concurrent: 2,
                local: false,
            };
            let id = db::accounts::insert_user(&mut tx, new, now).await?;
            db::accounts::set_sign_in(&mut tx, id, SignIn::Oidc).await?;
            crate::services::admin::allocate_uids(&state.settings, &mut tx).await?;
            let detail = serde_json::json!({"lab": lab, "role": role.as_str()});
            db::audit::record(&mut tx, ACTOR, "user.create", Some(&who.username), &detail, now).await?;
            id
        }
        Some(mut user) => {
            let mut changed = serde_json::Map::new();
            if user.lab_id != lab_id {
                changed.insert("lab".into(), serde_json::json!({"from": user.lab, "to": lab}));
            }
            if user.role != role {
                changed.insert("role".into(), serde_json::json!({"from": user.role.as_str(), "to": role.as_str()}));
            }
            if user.sign_in != SignIn::Oidc {
                changed.insert("auth".into(), serde_json::json!({"from": user.sign_in.as_str(), "to": "oidc"}));
                db::accounts::set_sign_in(&mut tx, user.id, SignIn::Oidc).await?;
            }
            if !changed.is_empty() {
                user.lab_id = lab_id;
                user.role = role;
                db::accounts::update_user(&mut tx, &user).await?;
                let detail = serde_json::Value::Object(changed);
                db::audit::record(&mut tx, ACTOR, "user.update", Some(&user.username), &detail, now).await?;
            }
            user.id
        }
    };
    let user = db::accounts::user_by_id(&mut tx, id)
        .await?
        .ok_or_else(|| ServiceError::Internal(format!("user {id} vanished inside its own transaction")))?;
    tx.commit().await?;
    Ok(user)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn groups_give_the_lab_and_role() {
        let re = regex::Regex::new("^gpu-lab-(.+)$").unwrap();
        let admins = groups(&["gpu-admins"]);
        // (groups, the user's lab now, the lab and role they give)
        type Case<'a> = (&'a [&'a str], Option<&'a str>, Option<(&'a str, Role)>);
        let table: &[Case] = &[
            (&["gpu-lab-vision", "staff"], None, Some(("vision", Role::Researcher))),
            (&["gpu-lab-vision", "gpu-admins"], None, Some(("vision", Role::Admin))),
            (&["students"], None, None),
            (&["gpu-admins"], None, None),
            (&["gpu-lab-"], None, None),
            // two labs: the first by name, or the current one if kept
            (&["gpu-lab-nlp", "gpu-lab-audio"], None, Some(("audio", Role::Researcher))),
            (&["gpu-lab-nlp", "gpu-lab-audio"], Some("nlp"), Some(("nlp", Role::Researcher))),
            (&["gpu-lab-audio"], Some("nlp"), Some(("audio", Role::Researcher))),
            (&["xgpu-lab-vision"], None, None),
        ];
        for (given, current, expected) in table {
            let got = lab_and_role(&groups(given), &re, &admins, *current);
            let expected = expected.map(|(lab, role)| (lab.to_string(), role));
            assert_eq!(got, expected, "{given:?} (now in {current:?})");
        }
    }

    #[test]
    fn names_the_provider_gives_must_fit_ours() {
        assert!(valid_name("kim.minji"));
        assert!(!valid_name("kim minji"));
        assert!(!valid_name("*)(uid=*"));
        assert!(!valid_name(""));
        assert!(!valid_name(&"a".repeat(65)));
    }
}
