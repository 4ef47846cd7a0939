//! The console's admin pages for tiers, nodes, labs, users and backfill:
//! each form's text fields are parsed here (a wrong one is named) into the
//! same request bodies /v1/admin takes, and handed to the same service
//! functions, so console and API change things the same way (audited).

use app::model::admin::{AdminAction, AdminClusterView};
use app::model::error::ConsoleError;
use app::model::Role;
use app::msg;

use crate::auth::Caller;
use crate::http::console::form::{parse_number, refused};
use crate::services::admin::backfill::{self, BackfillPatch};
use crate::services::admin::cluster::{self, NewNodeBody, NewTierBody, NodeGpus, TierPatch};
use crate::services::admin::oom::{self, OomPatterns};
use crate::services::admin::{self, NewLabBody, NewUserBody, UserPatch};
use crate::services::{views, Services};

fn required<T: std::str::FromStr>(field: &str, text: &str) -> Result<T, ConsoleError> {
    parse_number(field, text)?.ok_or_else(|| refused(msg!("err-required").on(field)))
}

fn role(field: &str, text: &str) -> Result<Option<Role>, ConsoleError> {
    match text.trim() {
        "" => Ok(None),
        other => other
            .parse()
            .map(Some)
            .map_err(|_| refused(msg!("err-one-of", text = other, options = "researcher, admin").on(field))),
    }
}

fn blank_is_none(text: String) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

pub async fn view(state: &Services) -> Result<AdminClusterView, ConsoleError> {
    Ok(AdminClusterView {
        tiers: cluster::tiers(state).await?,
        nodes: cluster::nodes(state).await?,
        labs: admin::lab_names(state).await?,
        users: admin::users(state).await?,
        backfill: views::backfill(state, true).await?,
        oom_patterns: oom::get(state).await?.patterns,
    })
}

/// Carries out one form's change and says what was done.
pub async fn act(state: &Services, admin: &Caller, action: AdminAction) -> Result<String, ConsoleError> {
    use AdminAction::*;
    let done = match action {
        CreateTier { name, display_name, vram_gb, tflops, sort_order, max_gpus } => {
            let body = NewTierBody {
                name,
                display_name: blank_is_none(display_name),
                vram_gb: required("vram_gb", &vram_gb)?,
                tflops: required("tflops", &tflops)?,
                sort_order: required("sort_order", &sort_order)?,
                max_gpus: required("max_gpus", &max_gpus)?,
                max_time_limit_minutes: None,
                slurm_partition: None,
                cpus_per_gpu: None,
                mem_gb_per_gpu: None,
            };
            let tier = cluster::create_tier(state, admin, body).await?;
            format!("Tier {} added.", tier.name)
        }
        UpdateTier { name, vram_gb, tflops, sort_order, max_gpus } => {
            let patch = TierPatch {
                vram_gb: parse_number("vram_gb", &vram_gb)?,
                tflops: parse_number("tflops", &tflops)?,
                sort_order: parse_number("sort_order", &sort_order)?,
                max_gpus: parse_number("max_gpus", &max_gpus)?,
                ..Default::default()
            };
            cluster::update_tier(state, admin, &name, patch).await?;
            format!("Tier {name} saved.")
        }
        SetTierActive { name, active } => {
            let patch = TierPatch { active: Some(active), ..Default::default() };
            cluster::update_tier(state, admin, &name, patch).await?;
            format!("Tier {name} is now {}.", if active { "active" } else { "inactive" })
        }
        CreateNode { name, tier, count } => {
            let body = NewNodeBody { name, gpus: vec![NodeGpus { tier, count: required("count", &count)? }] };
            let node = cluster::create_node(state, admin, body).await?;
            format!("Node {} added with {} GPU(s).", node.name, node.gpus.len())
        }
        DrainNode { name } => {
            cluster::drain_node(state, admin, &name).await?;
            format!("Node {name} is draining: running jobs finish, nothing new starts there.")
        }
        ResumeNode { name } => {
            cluster::resume_node(state, admin, &name).await?;
            format!("Node {name} is up again: new jobs may start there.")
        }
        SetOomPatterns { patterns } => {
            let patterns = patterns.lines().map(str::trim).filter(|p| !p.is_empty()).map(String::from).collect();
            let now = oom::set(state, admin, OomPatterns { patterns }).await?;
            format!("{} GPU-OOM signature(s) in force from the next attempt end.", now.patterns.len())
        }
        DeleteNode { name } => {
            cluster::delete_node(state, admin, &name).await?;
            format!("Node {name} removed.")
        }
        CreateLab { name } => {
            let lab = admin::create_lab(state, admin, NewLabBody { name }).await?;
            format!("Lab {} added.", lab.name)
        }
        CreateUser { username, password, lab, role: r, unix_uid, max_concurrent, local } => {
            let body = NewUserBody {
                username,
                password,
                lab,
                role: role("role", &r)?.unwrap_or(Role::Researcher),
                unix_uid: parse_number("unix_uid", &unix_uid)?,
                max_concurrent: parse_number("max_concurrent", &max_concurrent)?,
                local: Some(local),
                campus_subject: None,
            };
            let user = admin::create_user(state, admin, body).await?;
            format!("User {} added to {}.", user.username, user.lab)
        }
        UpdateUser { username, lab, role: r, unix_uid, max_concurrent, password, access } => {
            let unix_uid = match unix_uid.trim() {
                "none" => Some(None),
                other => parse_number("unix_uid", other)?.map(Some),
            };
            let patch = UserPatch {
                lab: blank_is_none(lab),
                role: role("role", &r)?,
                unix_uid,
                max_concurrent: parse_number("max_concurrent", &max_concurrent)?,
                password: (!password.is_empty()).then_some(password),
                disabled: match access.as_str() {
                    "" => None,
                    "disable" => Some(true),
                    "enable" => Some(false),
                    other => {
                        return Err(refused(msg!("err-one-of", text = other, options = "disable, enable").on("access")))
                    }
                },
                campus_subject: None,
            };
            admin::update_user(state, admin, &username, patch).await?;
            format!("User {username} saved.")
        }
        SetBackfill { enabled, command, min_idle_seconds, gpus_per_instance } => {
            let patch = BackfillPatch {
                enabled: Some(enabled),
                command: Some(command),
                min_idle_seconds: parse_number("min_idle_seconds", &min_idle_seconds)?,
                gpus_per_instance: parse_number("gpus_per_instance", &gpus_per_instance)?,
            };
            let now = backfill::update(state, admin, patch).await?;
            format!("Backfill settings saved: {}.", if now.enabled { "on" } else { "off" })
        }
    };
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_fields_are_parsed_and_mistakes_named() {
        assert_eq!(parse_number::<i64>("vram_gb", " 24 ").unwrap(), Some(24));
        assert_eq!(parse_number::<i64>("vram_gb", "").unwrap(), None);
        let e = parse_number::<i64>("vram_gb", "lots").unwrap_err().to_string();
        assert!(e.starts_with("vram_gb:"), "{e}");
        assert!(required::<f64>("tflops", "").unwrap_err().to_string().starts_with("tflops: required"));
        assert_eq!(role("role", "admin").unwrap(), Some(Role::Admin));
        assert!(role("role", "root").is_err());
    }
}
