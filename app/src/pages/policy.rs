//! The Policy page (`/policy`): how this deployment shares its GPUs, in
//! the sections of the platform's published policy, with every figure
//! taken from [`PolicyView`] (the running configuration and database).
//! Anyone may read it; reasons across the console link to its anchors
//! ([`crate::model::policy::reason_link`]). Server-rendered only: it
//! ships no code to the browser.

use crate::api::policy_facts;
use crate::model::policy::{oom_path, section, worked_example, PolicyView};
use crate::model::views::reason_in_words;
use crate::model::MaintenancePhase;
use crate::pages::components::{ErrorText, Layout, Time};
use leptos::prelude::*;

#[component]
pub fn PolicyPage() -> impl IntoView {
    let facts = Resource::new(|| (), |_| policy_facts());
    view! {
        <Layout>
            <h1>"How GPUs are shared"</h1>
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
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

fn thousands(x: f64) -> String {
    let whole = format!("{:.0}", x.round());
    let (sign, digits) = whole.strip_prefix('-').map_or(("", whole.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

fn duration(seconds: u64) -> String {
    match seconds {
        s if s >= 86_400 && s.is_multiple_of(86_400) => plural(s / 86_400, "day"),
        s if s >= 3_600 && s.is_multiple_of(3_600) => plural(s / 3_600, "hour"),
        s if s >= 60 && s.is_multiple_of(60) => plural(s / 60, "minute"),
        s => plural(s, "second"),
    }
}

fn plural(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
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
fn Section(id: &'static str, title: &'static str, children: Children) -> impl IntoView {
    view! {
        <section class="policy-section" aria-labelledby=id>
            <h2 id=id>{title}</h2>
            {children()}
        </section>
    }
}

#[component]
fn Policy(p: PolicyView) -> impl IntoView {
    view! {
        <nav class="policy-toc" aria-label="Sections">
            <ol>
                {[(section::OVERVIEW, "Overview"), (section::TIERS, "GPU tiers"), (section::SCHEDULING, "Scheduling"),
                  (section::FAIR_SHARE, "Fair-share"), (section::QUEUE, "Queues"), (section::OOM, "Out of GPU memory"),
                  (section::MULTI_GPU, "Multi-GPU jobs"), (section::BACKFILL, "LLM backfill"), (section::ISOLATION, "Isolation"),
                  (section::CANCEL, "Cancel and time limits"), (section::MAINTENANCE, "Maintenance"),
                  (section::SESSIONS, "Notebooks"), (section::REASONS, "Why a job waits or ended")]
                    .into_iter()
                    .map(|(id, title)| view! { <li><a href=format!("#{id}")>{title}</a></li> })
                    .collect_view()}
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
        <Reasons/>
    }
}

#[component]
fn Overview(p: PolicyView) -> impl IntoView {
    let gpus: u32 = p.placements.iter().map(|pl| pl.capacity).sum();
    let labs_rule =
        "GPUs are shared between labs by how much each lab used lately: the lab that used least goes first.";
    view! {
        <Section id=section::OVERVIEW title="Overview">
            <p>{format!("This cluster has {gpus} GPUs in {} placements. ", p.placements.len())} {labs_rule}</p>
            <ul>
                <li>"A job never has to be resubmitted after running out of GPU memory: it is retried on a larger GPU."</li>
                <li>"The first job in the queue never gives way to a job behind it; a multi-GPU job gathers its GPUs."</li>
                <li>"Idle GPUs serve an LLM inference service until research needs them."</li>
                <li>"Every job runs isolated, as its owner, with its own limits."</li>
            </ul>
        </Section>
    }
}

#[component]
fn Tiers(p: PolicyView) -> impl IntoView {
    let mut tiers = p.tiers.clone();
    tiers.sort_by_key(|t| std::cmp::Reverse(t.sort_order));
    view! {
        <Section id=section::TIERS title="GPU tiers">
            <p>"GPUs come in tiers: a GPU model with its memory (VRAM) and speed. A job gets the best tier that is free and fits it; the order below is that preference."</p>
            <div class="scroll">
            <table class="table cards" data-testid="policy-tiers">
                <thead><tr><th>"Order"</th><th>"Tier"</th><th>"VRAM"</th><th>"TFLOPS"</th><th>"Max GPUs per job"</th><th>"Longest time limit"</th><th>"Active"</th></tr></thead>
                <tbody>
                    {tiers.into_iter().map(|t| view! {
                        <tr data-tier=t.name.clone()>
                            <td data-label="Order">{t.sort_order}</td>
                            <td data-label="Tier">{format!("{} ({})", t.display_name, t.name)}</td>
                            <td data-label="VRAM">{format!("{} GB", t.vram_gb)}</td>
                            <td data-label="TFLOPS">{format!("{}", t.tflops)}</td>
                            <td data-label="Max GPUs per job">{t.max_gpus}</td>
                            <td data-label="Longest time limit">{duration(t.max_time_limit_minutes.max(0) as u64 * 60)}</td>
                            <td data-label="Active">{if t.active { "yes" } else { "no (takes no new jobs)" }}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            </div>
            <h3>"Placements"</h3>
            <p>"A placement is the GPUs of one tier on one node; a job runs inside one placement."</p>
            <ul data-testid="policy-placements">
                {p.placements.iter().map(|pl| view! {
                    <li>{format!("{} — {} × {}{}", pl.node, pl.capacity, pl.tier, if pl.usable { "" } else { " (not taking jobs now)" })}</li>
                }).collect_view()}
            </ul>
        </Section>
    }
}

#[component]
fn Scheduling(p: PolicyView) -> impl IntoView {
    let every = duration(p.cycle_ms / 1000);
    view! {
        <Section id=section::SCHEDULING title="Scheduling">
            <p data-testid="policy-cycle">{format!("Every {every} (and at once when a job is submitted or ends) the scheduler looks at every waiting job in fair-share order and starts each one that fits on free GPUs, best tier first.")}</p>
            <p>"A job waits with “no idle GPUs fit it yet” when no placement has enough free GPUs of a tier that allows its size and VRAM, and with “waiting for higher-ranked jobs” when GPUs are free but the jobs ahead of it come first."</p>
            <p>{format!("A job without a time limit gets {}.", duration(u64::from(p.default_time_limit_minutes) * 60))}</p>
        </Section>
    }
}

#[component]
fn FairShare(p: PolicyView) -> impl IntoView {
    let best = p.tiers.iter().filter(|t| t.active).max_by_key(|t| t.sort_order).cloned();
    let example = best.map(|t| {
        let (hour, run, held) = worked_example(t.tflops);
        view! {
            <p data-testid="policy-example">
                {format!("For example, on {} ({} TFLOPS): one GPU for an hour is 1 × 3,600 × {} = {} TFLOP·s. A two-GPU job that held one GPU for 10 minutes while it waited for the second, then ran 30 minutes on both, is charged {} + {} = {} TFLOP·s.",
                    t.display_name, t.tflops, t.tflops, thousands(hour), thousands(run), thousands(held), thousands(run + held))}
            </p>
        }
    });
    let half_life = duration(p.half_life_ms / 1000);
    view! {
        <Section id=section::FAIR_SHARE title="Fair-share">
            <p>"The queue is ordered by each lab's usage: the lab that used least goes first; within a lab, the job that waited longest."</p>
            <p><strong>"usage = GPUs held × seconds held × the tier's TFLOPS"</strong>" (TFLOP·s). Held time counts: a multi-GPU job gathering its GPUs is charged for the ones it holds."</p>
            {example}
            <p data-testid="policy-half-life">{format!("Usage halves every {half_life}: usage now = usage × 0.5 ^ (time since / {half_life}). A lab that used a lot lately waits more; a lab that did not regains its place.")}</p>
        </Section>
    }
}

#[component]
fn Queues(p: PolicyView) -> impl IntoView {
    let yours = p.your_concurrency.map(|n| format!(" Yours is {n}."));
    view! {
        <Section id=section::QUEUE title="Queues">
            <p data-testid="policy-concurrency">{format!("Each person runs or waits in the global queue with at most {} jobs at once (admins can change it per person).", p.default_concurrency)} {yours}</p>
            <p>"More jobs wait in your personal queue (“over the owner's concurrent-job limit”) and move to the global queue, oldest first, as yours end. Jobs waiting for other jobs (dependencies) or held by an array's limit wait there too."</p>
            <p data-testid="policy-queue-limit">{format!("You may have at most {} unfinished jobs; more is refused (QUEUE_LIMIT).", p.max_unfinished)}</p>
        </Section>
    }
}

#[component]
fn Oom(p: PolicyView) -> impl IntoView {
    let path = oom_path(&p.tiers)
        .into_iter()
        .map(|step| {
            let names: Vec<String> = step.iter().map(|t| t.display_name.clone()).collect();
            format!("{} ({} GB)", names.join(" / "), step[0].vram_gb)
        })
        .collect::<Vec<_>>()
        .join(" → ");
    view! {
        <Section id=section::OOM title="Out of GPU memory">
            <p>{format!("When a job fails and the last {} KiB of its output show a GPU out-of-memory error, it is retried on a tier with more VRAM, without resubmitting: same place in the queue, same slot. At most {} attempts; with no larger tier it ends OOM_NO_LARGER_TIER.", p.oom_tail_kib, p.max_attempts)}</p>
            <p data-testid="policy-oom-path">"Escalation: " {path}</p>
            <p>"What counts as a GPU out-of-memory error (any of these, case-insensitive; admins keep the list):"</p>
            <ul data-testid="policy-oom-patterns">{p.oom_patterns.iter().map(|s| view! { <li><code>{s.clone()}</code></li> }).collect_view()}</ul>
            <p>"Every attempt uses GPU time and is charged. JOB_ATTEMPT tells the job which attempt it is, so it can resume from its checkpoints in JOB_OUTPUT_DIR. Running out of host memory (RAM) is HOST_OOM and is not retried."</p>
        </Section>
    }
}

#[component]
fn MultiGpu(p: PolicyView) -> impl IntoView {
    let mode = if p.policy == "planned" {
        format!("This cluster runs the planned policy: the first {} jobs of the order get a planned start on the placement that frees first, and GPUs are held for them only shortly before; jobs behind may run on GPUs the plan does not need yet. A job waiting over {} hours goes ahead of fair-share while such jobs use at most {} % of the GPUs.", p.plan_depth, p.max_wait_hours, p.lift_percent)
    } else {
        "This cluster runs the seed policy: only the first job of the queue reserves GPUs.".to_string()
    };
    view! {
        <Section id=section::MULTI_GPU title="Multi-GPU jobs">
            <p>"A multi-GPU job runs inside one placement, at most the tier's “max GPUs per job”. A job that no placement could ever fit is refused when submitted (NO_FIT_PLACEMENT)."</p>
            <p>"The first job of the queue never gives way. If it needs more GPUs than are free, it reserves the free ones and gathers the rest as they free up (“waiting for N more GPUs”); it jumps to another placement if one frees enough at once. It is charged for what it holds, when it ends, so holding never pushes its own lab back; if another lab's usage puts it behind, it lets go and is charged for what it held."</p>
            <p data-testid="policy-mode">{mode}</p>
        </Section>
    }
}

#[component]
fn Backfill(p: PolicyView) -> impl IntoView {
    let state = if p.backfill_enabled {
        format!(
            "On: a GPU idle for {} serves the LLM service; research takes it back at once when it needs it.",
            duration(p.backfill_min_idle_seconds)
        )
    } else {
        "Off on this cluster: idle GPUs stay idle.".to_string()
    };
    view! {
        <Section id=section::BACKFILL title="LLM backfill">
            <p data-testid="policy-backfill">{state}</p>
            <p>"Research always comes first; the service never delays a job."</p>
        </Section>
    }
}

#[component]
fn Isolation(p: PolicyView) -> impl IntoView {
    let i = p.isolation;
    let executor = match i.executor.as_str() {
        "slurm" => "Jobs run on the Slurm cluster.",
        "local" => "Jobs run as processes on this server's machine.",
        _ => "No executor runs jobs right now.",
    };
    let yes_no = |b: bool, yes: &'static str, no: &'static str| if b { yes } else { no };
    view! {
        <Section id=section::ISOLATION title="Isolation">
            <p data-testid="policy-executor">{executor}</p>
            <ul data-testid="policy-isolation">
                <li>{yes_no(i.own_uid, "Each job runs as its owner's own Unix user: no job can read another person's files or processes.", "Jobs do NOT run as their owners' own users here.")}</li>
                <li>{if i.limits.is_empty() { "No CPU, memory or process limits are enforced here.".to_string() } else { format!("Limits: {} — CPUs and memory in proportion to the job's GPUs.", i.limits) }}</li>
                <li>{match (i.executor.as_str(), i.loopback_only) {
                    (_, true) => "Network: only loopback inside the job (multi-GPU rendezvous on 127.0.0.1 works); no outside network. Install packages when building a workspace.",
                    ("slurm", false) => "Network: the node's own network, as the cluster configures it.",
                    _ => "Network: NOT isolated here.",
                }}</li>
                <li>{yes_no(i.private_scratch, "/tmp, /var/tmp and /dev/shm are the job's own and vanish with it.", "Scratch folders (/tmp, /dev/shm) are the node's.")}</li>
                {i.no_user_namespaces.then(|| view! { <li>"Jobs may not create user namespaces."</li> })}
                <li>{format!("Jobs with a workspace run in its container image ({}).", i.container)}</li>
                <li>{format!("A job's log may reach {} and its output folder {}; past that it is stopped (LOG_LIMIT, OUTPUT_LIMIT).", bytes(i.max_log_bytes), bytes(i.max_output_bytes))}</li>
                <li>"Your output is in JOB_OUTPUT_DIR, a folder only you can read."</li>
            </ul>
        </Section>
    }
}

#[component]
fn Cancel(p: PolicyView) -> impl IntoView {
    view! {
        <Section id=section::CANCEL title="Cancel and time limits">
            <p data-testid="policy-grace">{format!("Cancelling (or reaching the time limit) sends SIGTERM to the job, waits {} for it to save a checkpoint, then stops it with SIGKILL.", duration(p.cancel_grace_seconds))}</p>
        </Section>
    }
}

#[component]
fn Maintenance(p: PolicyView) -> impl IntoView {
    let now = match p.maintenance.phase {
        MaintenancePhase::Normal => view! { "Now: normal operation." }.into_any(),
        phase => {
            view! { {format!("Now: {}, since ", phase.as_str())} <Time at=p.maintenance.since.clone()/> "." }.into_any()
        }
    };
    view! {
        <Section id=section::MAINTENANCE title="Maintenance">
            <p>"For work on shared storage or Slurm, admins put the cluster in maintenance, shown in a banner on every page:"</p>
            <ol>
                <li>"DRAINING — new jobs are refused; running jobs finish; you may still cancel."</li>
                <li>"BACKFILL_RECOVERY — the LLM service is taken back."</li>
                <li>"ACTIVE — operators work; nothing starts."</li>
                <li>"NORMAL — waiting jobs start again in fair-share order."</li>
            </ol>
            <p data-testid="policy-maintenance">{now}</p>
        </Section>
    }
}

#[component]
fn Sessions(p: PolicyView) -> impl IntoView {
    let apps = if p.session_apps.is_empty() { "none on this cluster".to_string() } else { p.session_apps.join(", ") };
    view! {
        <Section id=section::SESSIONS title="Notebooks">
            <p>{format!("A notebook (apps: {apps}) is a job like any other: it waits in the same queue, is charged the same and is isolated the same. It ends after {} minutes without activity (IDLE); each person may have {} at once.", p.session_idle_minutes, p.sessions_per_user)}</p>
        </Section>
    }
}

#[component]
fn Reasons() -> impl IntoView {
    let waiting = ["USER_CONCURRENCY_LIMIT", "DEPENDENCY", "WAITING_FOR_HIGHER_RANK", "NO_IDLE_GPU", "MAINTENANCE"];
    let ended = [
        ("COMPLETED", "the job exited with code 0"),
        ("NONZERO_EXIT", "the job exited with another code"),
        ("TIME_LIMIT", "it reached its time limit"),
        ("CANCELLED", "its owner or an admin cancelled it"),
        ("OOM_NO_LARGER_TIER", "it ran out of GPU memory and no tier has more"),
        ("HOST_OOM", "it ran out of host memory (RAM)"),
        ("LOG_LIMIT", "its log grew past the limit"),
        ("OUTPUT_LIMIT", "its output folder grew past the limit"),
        ("EXECUTOR_LOST", "its node or process was lost"),
        ("DEPENDENCY_NEVER_SATISFIED", "a job it depended on ended the wrong way"),
        ("IDLE", "a notebook without activity"),
    ];
    let link = |r: &str| crate::model::policy::reason_link(r).unwrap_or_default();
    view! {
        <Section id=section::REASONS title="Why a job waits or ended">
            <dl class="reasons">
                {waiting.into_iter().map(|r| view! {
                    <dt><a href=link(r)><code>{r}</code></a></dt><dd>{reason_in_words(r)}</dd>
                }).collect_view()}
                <dt><a href=link("RESERVING")><code>"RESERVING"</code>", "<code>"PLANNED"</code></a></dt>
                <dd>"a multi-GPU job gathering its GPUs, or planned to start at a given time"</dd>
                {ended.into_iter().map(|(r, words)| view! {
                    <dt><a href=link(r)><code>{r}</code></a></dt><dd>{words}</dd>
                }).collect_view()}
            </dl>
        </Section>
    }
}
