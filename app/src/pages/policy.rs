//! The Policy page (`/policy`): how this deployment shares its GPUs, in
//! the sections of the platform's published policy, with every figure
//! taken from [`PolicyView`] (the running configuration and database) and
//! every word from the request's language ([`crate::i18n`]). Anyone may
//! read it; reasons across the console link to its anchors
//! ([`crate::model::policy::reason_link`]). Server-rendered only: it
//! ships no code to the browser.

use crate::api::policy_facts;
use crate::i18n::{locale, t, t_with, tr};
use crate::model::policy::{oom_path, section, worked_example, PolicyView};
use crate::model::MaintenancePhase;
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;

#[component]
pub fn PolicyPage() -> impl IntoView {
    let facts = Resource::new(|| (), |_| policy_facts());
    view! {
        <Layout>
            <h1>{t("policy-title")}</h1>
            <Suspense fallback=|| view! { <p>{t("loading")}</p> }>
                {move || Suspend::new(async move {
                    match facts.await {
                        Ok(p) => view! { <Policy p/> }.into_any(),
                        Err(e) => view! { <ErrorText error=e/> }.into_any(),
                    }
                })}
            </Suspense>
        </Layout>
    }
}

const SECTIONS: [&str; 14] = [
    section::OVERVIEW,
    section::TIERS,
    section::SCHEDULING,
    section::FAIR_SHARE,
    section::QUEUE,
    section::OOM,
    section::MULTI_GPU,
    section::BACKFILL,
    section::ISOLATION,
    section::CANCEL,
    section::MAINTENANCE,
    section::SESSIONS,
    section::DATA,
    section::REASONS,
];

/// A section's title: the message `sec-<anchor>`.
fn title(id: &str) -> String {
    tr(locale(), &format!("sec-{id}"), &[])
}

fn thousands(x: f64) -> String {
    let whole = format!("{:.0}", x.round());
    let (sign, digits) = whole.strip_prefix('-').map_or(("", whole.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// `3600` as "1 hour" / "1시간": the largest whole unit.
fn duration(seconds: u64) -> String {
    let (n, unit) = match seconds {
        s if s >= 86_400 && s.is_multiple_of(86_400) => (s / 86_400, "unit-day"),
        s if s >= 3_600 && s.is_multiple_of(3_600) => (s / 3_600, "unit-hour"),
        s if s >= 60 && s.is_multiple_of(60) => (s / 60, "unit-minute"),
        s => (s, "unit-second"),
    };
    tr(locale(), unit, &[("n", n.into())])
}

fn bytes(n: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if n >= GIB && n.is_multiple_of(GIB) {
        format!("{} GiB", n / GIB)
    } else {
        format!("{} MiB", n / MIB)
    }
}

#[component]
fn Section(id: &'static str, children: Children) -> impl IntoView {
    view! {
        <section class="policy-section" aria-labelledby=id>
            <h2 id=id>{title(id)}</h2>
            {children()}
        </section>
    }
}

#[component]
fn Policy(p: PolicyView) -> impl IntoView {
    view! {
        <nav class="policy-toc" aria-label=t("policy-sections")>
            <ol>
                {SECTIONS.into_iter().map(|id| view! { <li><a href=format!("#{id}")>{title(id)}</a></li> }).collect_view()}
            </ol>
        </nav>
        <Overview p=p.clone()/>
        <Tiers p=p.clone()/>
        <Scheduling p=p.clone()/>
        <FairShare p=p.clone()/>
        <Queues p=p.clone()/>
        <Oom p=p.clone()/>
        <MultiGpu p=p.clone()/>
        <Backfill p=p.clone()/>
        <Isolation p=p.clone()/>
        <Cancel p=p.clone()/>
        <Maintenance p=p.clone()/>
        <Sessions p=p.clone()/>
        <Data p=p.clone()/>
        <Reasons/>
    }
}

#[component]
fn Overview(p: PolicyView) -> impl IntoView {
    let gpus: u32 = p.placements.iter().map(|pl| pl.capacity).sum();
    let size = t_with("overview-size", &[("gpus", gpus.into()), ("placements", p.placements.len().into())]);
    view! {
        <Section id=section::OVERVIEW>
            <p>{size} " " {t("overview-rule")}</p>
            <ul>
                <li>{t("overview-oom")}</li>
                <li>{t("overview-rank1")}</li>
                <li>{t("overview-backfill")}</li>
                <li>{t("overview-isolation")}</li>
            </ul>
        </Section>
    }
}

#[component]
fn Tiers(p: PolicyView) -> impl IntoView {
    let mut tiers = p.tiers.clone();
    tiers.sort_by_key(|tier| std::cmp::Reverse(tier.sort_order));
    let cols: Vec<String> = ["order", "tier", "vram", "tflops", "max", "limit", "active"]
        .iter()
        .map(|c| tr(locale(), &format!("tiers-col-{c}"), &[]))
        .collect();
    let (yes, no) = (t("tiers-active-yes"), t("tiers-active-no"));
    let unusable = t("placement-unusable");
    let rows = tiers
        .into_iter()
        .map(|tier| {
            let active = if tier.active { yes.clone() } else { no.clone() };
            view! {
                <tr data-tier=tier.name.clone()>
                    <td data-label=cols[0].clone()>{tier.sort_order}</td>
                    <td data-label=cols[1].clone()>{format!("{} ({})", tier.display_name, tier.name)}</td>
                    <td data-label=cols[2].clone()>{format!("{} GB", tier.vram_gb)}</td>
                    <td data-label=cols[3].clone()>{format!("{}", tier.tflops)}</td>
                    <td data-label=cols[4].clone()>{tier.max_gpus}</td>
                    <td data-label=cols[5].clone()>{duration(tier.max_time_limit_minutes.max(0) as u64 * 60)}</td>
                    <td data-label=cols[6].clone()>{active}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <Section id=section::TIERS>
            <p>{t("tiers-intro")}</p>
            <div class="scroll" tabindex="0">
            <table class="table cards" data-testid="policy-tiers">
                <thead><tr>{cols.iter().map(|c| view! { <th>{c.clone()}</th> }).collect_view()}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
            </div>
            <h3>{t("placements-title")}</h3>
            <p>{t("placements-intro")}</p>
            <ul data-testid="policy-placements">
                {p.placements.iter().map(|pl| view! {
                    <li>{format!("{} — {} × {}", pl.node, pl.capacity, pl.tier)} {(!pl.usable).then(|| format!(" {unusable}"))}</li>
                }).collect_view()}
            </ul>
        </Section>
    }
}

#[component]
fn Scheduling(p: PolicyView) -> impl IntoView {
    let every = duration(p.cycle_ms / 1000);
    let default_limit = duration(u64::from(p.default_time_limit_minutes) * 60);
    view! {
        <Section id=section::SCHEDULING>
            <p data-testid="policy-cycle">{t_with("policy-cycle", &[("every", every.into())])}</p>
            <p>{t("scheduling-waits")}</p>
            <p>{t_with("scheduling-default-limit", &[("limit", default_limit.into())])}</p>
        </Section>
    }
}

#[component]
fn FairShare(p: PolicyView) -> impl IntoView {
    let best = p.tiers.iter().filter(|tier| tier.active).max_by_key(|tier| tier.sort_order).cloned();
    let example = best.map(|tier| {
        let (hour, run, held) = worked_example(tier.tflops);
        let text = t_with(
            "fair-example",
            &[
                ("tier", tier.display_name.clone().into()),
                ("tflops", format!("{}", tier.tflops).into()),
                ("hour", thousands(hour).into()),
                ("run", thousands(run).into()),
                ("held", thousands(held).into()),
                ("total", thousands(run + held).into()),
            ],
        );
        view! { <p data-testid="policy-example">{text}</p> }
    });
    let half_life = duration(p.half_life_ms / 1000);
    view! {
        <Section id=section::FAIR_SHARE>
            <p>{t("fair-order")}</p>
            <p><strong>{t("fair-formula")}</strong>" "{t("fair-formula-note")}</p>
            {example}
            <p data-testid="policy-half-life">{t_with("fair-half-life", &[("half", half_life.into())])}</p>
        </Section>
    }
}

#[component]
fn Queues(p: PolicyView) -> impl IntoView {
    let yours = p.your_concurrency.map(|n| format!(" {}", t_with("queue-yours", &[("n", n.into())])));
    view! {
        <Section id=section::QUEUE>
            <p data-testid="policy-concurrency">{t_with("queue-concurrency", &[("n", p.default_concurrency.into())])} {yours}</p>
            <p>{t("queue-personal")}</p>
            <p data-testid="policy-queue-limit">{t_with("queue-limit", &[("n", p.max_unfinished.into())])}</p>
        </Section>
    }
}

#[component]
fn Oom(p: PolicyView) -> impl IntoView {
    let path = oom_path(&p.tiers)
        .into_iter()
        .map(|step| {
            let names: Vec<String> = step.iter().map(|tier| tier.display_name.clone()).collect();
            format!("{} ({} GB)", names.join(" / "), step[0].vram_gb)
        })
        .collect::<Vec<_>>()
        .join(" → ");
    view! {
        <Section id=section::OOM>
            <p>{t_with("oom-rule", &[("kib", p.oom_tail_kib.into()), ("attempts", p.max_attempts.into())])}</p>
            <p data-testid="policy-oom-path">{t("oom-path")} " " {path}</p>
            <p>{t("oom-patterns")}</p>
            <ul data-testid="policy-oom-patterns">{p.oom_patterns.iter().map(|s| view! { <li><code>{s.clone()}</code></li> }).collect_view()}</ul>
            <p>{t("oom-after")}</p>
        </Section>
    }
}

#[component]
fn MultiGpu(p: PolicyView) -> impl IntoView {
    let mode = if p.policy == "planned" {
        let mut text = t_with(
            "multi-planned",
            &[("depth", p.plan_depth.into()), ("hours", p.max_wait_hours.into()), ("percent", p.lift_percent.into())],
        );
        match p.lift_ahead_of_light {
            0 => text = format!("{text} {}", t("multi-planned-light")),
            u32::MAX => {}
            n => text = format!("{text} {}", t_with("multi-planned-light-some", &[("ahead", n.into())])),
        }
        if p.charge_drains {
            text = format!("{text} {}", t("multi-planned-drains"));
        }
        if p.predicted_ends {
            text = format!("{text} {}", t("multi-planned-predicted"));
        }
        text
    } else {
        t("multi-seed")
    };
    view! {
        <Section id=section::MULTI_GPU>
            <p>{t("multi-rules")}</p>
            <p>{t("multi-rank1")}</p>
            <p data-testid="policy-mode">{mode}</p>
        </Section>
    }
}

#[component]
fn Backfill(p: PolicyView) -> impl IntoView {
    let state = if p.backfill_enabled {
        t_with("backfill-on", &[("idle", duration(p.backfill_min_idle_seconds).into())])
    } else {
        t("backfill-off")
    };
    view! {
        <Section id=section::BACKFILL>
            <p data-testid="policy-backfill">{state}</p>
            <p>{t("backfill-first")}</p>
        </Section>
    }
}

#[component]
fn Isolation(p: PolicyView) -> impl IntoView {
    let i = p.isolation;
    let executor = match i.executor.as_str() {
        "slurm" => "iso-slurm",
        "local" => "iso-local",
        _ => "iso-none",
    };
    let pick = |holds: bool, yes: &str, no: &str| t(if holds { yes } else { no });
    let network = match (i.executor.as_str(), i.loopback_only) {
        (_, true) => "iso-net-loopback",
        ("slurm", false) => "iso-net-node",
        _ => "iso-net-none",
    };
    let limits = if i.limits.is_empty() {
        t("iso-limits-none")
    } else {
        t_with("iso-limits", &[("limits", i.limits.clone().into())])
    };
    let disk =
        t_with("iso-disk", &[("log", bytes(i.max_log_bytes).into()), ("output", bytes(i.max_output_bytes).into())]);
    view! {
        <Section id=section::ISOLATION>
            <p data-testid="policy-executor">{t(executor)}</p>
            <ul data-testid="policy-isolation">
                <li>{pick(i.own_uid, "iso-uid-yes", "iso-uid-no")}</li>
                <li>{limits}</li>
                <li>{t(network)}</li>
                <li>{pick(i.private_scratch, "iso-scratch-yes", "iso-scratch-no")}</li>
                {i.no_user_namespaces.then(|| view! { <li>{t("iso-userns")}</li> })}
                <li>{t_with("iso-container", &[("container", i.container.clone().into())])}</li>
                <li>{disk}</li>
                <li>{t("iso-output")}</li>
            </ul>
        </Section>
    }
}

#[component]
fn Cancel(p: PolicyView) -> impl IntoView {
    let grace = duration(p.cancel_grace_seconds);
    view! {
        <Section id=section::CANCEL>
            <p data-testid="policy-grace">{t_with("cancel-grace", &[("grace", grace.into())])}</p>
        </Section>
    }
}

#[component]
fn Maintenance(p: PolicyView) -> impl IntoView {
    let now = match p.maintenance.phase {
        MaintenancePhase::Normal => view! { {t("maint-now-normal")} }.into_any(),
        phase => {
            let text = t_with("maint-now", &[("phase", phase.as_str().into())]);
            view! { {text} " " <Time at=p.maintenance.since.clone()/> }.into_any()
        }
    };
    view! {
        <Section id=section::MAINTENANCE>
            <p>{t("maint-intro")}</p>
            <ol>
                <li>{t("maint-draining")}</li>
                <li>{t("maint-recovery")}</li>
                <li>{t("maint-active")}</li>
                <li>{t("maint-normal")}</li>
            </ol>
            <p data-testid="policy-maintenance">{now}</p>
        </Section>
    }
}

#[component]
fn Sessions(p: PolicyView) -> impl IntoView {
    let apps = if p.session_apps.is_empty() { t("sessions-none") } else { p.session_apps.join(", ") };
    let text = t_with(
        "sessions-text",
        &[("apps", apps.into()), ("idle", p.session_idle_minutes.into()), ("n", p.sessions_per_user.into())],
    );
    view! {
        <Section id=section::SESSIONS>
            <p>{text}</p>
        </Section>
    }
}

/// §13: the three places, this site's quotas and limits, and that the
/// site touches files only as their owner.
#[component]
fn Data(p: PolicyView) -> impl IntoView {
    let gb = |bytes: u64| format!("{:.1} GB", bytes as f64 / 1e9);
    view! {
        <Section id=section::DATA>
            <p>{t("data-places")}</p>
            <ul data-testid="policy-data">
                <li>{t_with("data-home", &[("quota", gb(p.home_quota_bytes).into())])}</li>
                <li>{t_with("data-lab", &[("quota", gb(p.lab_quota_bytes).into())])}</li>
                <li>{t_with("data-datasets", &[("max", gb(p.max_dataset_bytes).into())])}</li>
            </ul>
            <p>{t_with("data-quota", &[("minutes", p.scan_minutes.into()), ("upload", gb(p.max_upload_bytes).into())])}</p>
            <p>{t("data-as-you")}</p>
        </Section>
    }
}

/// The pending reasons the page lists (with RESERVING and PLANNED, which
/// carry details, in one entry of their own).
const WAITING_REASONS: [&str; 5] =
    ["USER_CONCURRENCY_LIMIT", "DEPENDENCY", "WAITING_FOR_HIGHER_RANK", "NO_IDLE_GPU", "MAINTENANCE"];

/// The end reasons the page lists.
const END_REASONS: [&str; 11] = [
    "COMPLETED",
    "NONZERO_EXIT",
    "TIME_LIMIT",
    "CANCELLED",
    "OOM_NO_LARGER_TIER",
    "HOST_OOM",
    "LOG_LIMIT",
    "OUTPUT_LIMIT",
    "EXECUTOR_LOST",
    "DEPENDENCY_NEVER_SATISFIED",
    "IDLE",
];

/// The message saying a reason in words: `reason-…` or `end-…` named
/// after its code (`HOST_OOM` → `end-host-oom`).
fn reason_key(prefix: &str, code: &str) -> String {
    format!("{prefix}-{}", code.to_ascii_lowercase().replace('_', "-"))
}

/// Every pending and end reason: its code, linked to its section, and its
/// words.
#[component]
fn Reasons() -> impl IntoView {
    let link = |r: &str| crate::model::policy::reason_link(r).unwrap_or_default();
    view! {
        <Section id=section::REASONS>
            <dl class="reasons">
                {WAITING_REASONS.into_iter().map(|r| view! {
                    <dt><a href=link(r)><code>{r}</code></a></dt><dd>{tr(locale(), &reason_key("reason", r), &[])}</dd>
                }).collect_view()}
                <dt><a href=link("RESERVING")><code>"RESERVING"</code>", "<code>"PLANNED"</code></a></dt>
                <dd>{t("reason-gathering")}</dd>
                {END_REASONS.into_iter().map(|r| view! {
                    <dt><a href=link(r)><code>{r}</code></a></dt><dd>{tr(locale(), &reason_key("end", r), &[])}</dd>
                }).collect_view()}
            </dl>
        </Section>
    }
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use super::*;
    use crate::i18n::Locale;

    /// The keys this page composes at run time (a section's title, a
    /// column, a reason's words) exist in both languages.
    #[test]
    fn every_composed_key_exists() {
        let mut keys: Vec<String> = SECTIONS.iter().map(|id| format!("sec-{id}")).collect();
        keys.extend(["order", "tier", "vram", "tflops", "max", "limit", "active"].map(|c| format!("tiers-col-{c}")));
        keys.extend(["unit-day", "unit-hour", "unit-minute", "unit-second"].map(String::from));
        // the dashboard's GPU uses (`dash-use-{use}`)
        keys.extend(["idle", "research", "backfill", "reserved"].map(|u| format!("dash-use-{u}")));
        keys.extend(WAITING_REASONS.iter().map(|c| reason_key("reason", c)));
        keys.extend(END_REASONS.iter().map(|c| reason_key("end", c)));
        let missing = crate::i18n::missing_keys(keys.iter());
        assert!(missing.is_empty(), "missing: {missing:?}");
        assert_eq!(crate::i18n::tr(Locale::Ko, "sec-fair-share", &[]), "공정성 정책 (Fair-share)");
    }

    #[test]
    fn durations_take_the_largest_whole_unit() {
        assert_eq!(thousands(346_920.0), "346,920");
        assert_eq!(thousands(-1_000.0), "-1,000");
        assert_eq!(bytes(1 << 30), "1 GiB");
        assert_eq!(bytes(100 << 20), "100 MiB");
        assert_eq!(duration(86_400 * 7), "7 days");
        assert_eq!(duration(90), "90 seconds");
        assert_eq!(duration(3_600), "1 hour");
    }
}
