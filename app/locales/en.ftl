# The console in English. Every key here must be in ko.ftl too (a test
# holds them to each other). Terms of the platform stay as they are:
# fair-share, placement, backfill, tier.

## Header, navigation, banners

nav-main = Main
nav-dashboard = Dashboard
nav-queue = Queue
nav-jobs = Jobs
nav-submit = Submit
nav-usage = Lab usage
nav-policy = Policy
nav-account = Account
nav-admin = Admin
nav-sign-in = Sign in
nav-sign-out = Sign out
lang-switch = Language
banner-draining = Maintenance: draining — new jobs are not accepted; running jobs finish.
banner-recovery = Maintenance: reclaiming LLM backfill before operators start.
banner-active = Maintenance in progress — jobs are not dispatched.
banner-since = since
cluster-down-title = Cluster unreachable
cluster-down-text = New jobs stay queued until it answers again.
not-found = No such page.
loading = Loading…

## Units

unit-second = { $n ->
    [one] 1 second
   *[other] { $n } seconds
}
unit-minute = { $n ->
    [one] 1 minute
   *[other] { $n } minutes
}
unit-hour = { $n ->
    [one] 1 hour
   *[other] { $n } hours
}
unit-day = { $n ->
    [one] 1 day
   *[other] { $n } days
}

## The Policy page

policy-title = How GPUs are shared
policy-sections = Sections
sec-overview = Overview
sec-tiers = GPU tiers
sec-scheduling = Scheduling
sec-fair-share = Fair-share
sec-queue = Queues
sec-oom = Out of GPU memory
sec-multi-gpu = Multi-GPU jobs
sec-backfill = LLM backfill
sec-isolation = Isolation
sec-cancel = Cancel and time limits
sec-maintenance = Maintenance
sec-sessions = Notebooks
sec-reasons = Why a job waits or ended

overview-size = This cluster has { $gpus } GPUs in { $placements } placements.
overview-rule = GPUs are shared between labs by how much each lab used lately: the lab that used least goes first.
overview-oom = A job never has to be resubmitted after running out of GPU memory: it is retried on a larger GPU.
overview-rank1 = The first job in the queue never gives way to a job behind it; a multi-GPU job gathers its GPUs.
overview-backfill = Idle GPUs serve an LLM inference service until research needs them.
overview-isolation = Every job runs isolated, as its owner, with its own limits.

tiers-intro = GPUs come in tiers: a GPU model with its memory (VRAM) and speed. A job gets the best tier that is free and fits it; the order below is that preference.
tiers-col-order = Order
tiers-col-tier = Tier
tiers-col-vram = VRAM
tiers-col-tflops = TFLOPS
tiers-col-max = Max GPUs per job
tiers-col-limit = Longest time limit
tiers-col-active = Active
tiers-active-yes = yes
tiers-active-no = no (takes no new jobs)
placements-title = Placements
placements-intro = A placement is the GPUs of one tier on one node; a job runs inside one placement.
placement-unusable = (not taking jobs now)

policy-cycle = Every { $every } (and at once when a job is submitted or ends) the scheduler looks at every waiting job in fair-share order and starts each one that fits on free GPUs, best tier first.
scheduling-waits = A job waits with “no idle GPUs fit it yet” when no placement has enough free GPUs of a tier that allows its size and VRAM, and with “waiting for higher-ranked jobs” when GPUs are free but the jobs ahead of it come first.
scheduling-default-limit = A job without a time limit gets { $limit }.

fair-order = The queue is ordered by each lab's usage: the lab that used least goes first; within a lab, the job that waited longest.
fair-formula = usage = GPUs held × seconds held × the tier's TFLOPS
fair-formula-note = (TFLOP·s). Held time counts: a multi-GPU job gathering its GPUs is charged for the ones it holds.
fair-example = For example, on { $tier } ({ $tflops } TFLOPS): one GPU for an hour is 1 × 3,600 × { $tflops } = { $hour } TFLOP·s. A two-GPU job that held one GPU for 10 minutes while it waited for the second, then ran 30 minutes on both, is charged { $run } + { $held } = { $total } TFLOP·s.
fair-half-life = Usage halves every { $half }: usage now = usage × 0.5 ^ (time since / { $half }). A lab that used a lot lately waits more; a lab that did not regains its place.

queue-concurrency = Each person runs or waits in the global queue with at most { $n } jobs at once (admins can change it per person).
queue-yours = Yours is { $n }.
queue-personal = More jobs wait in your personal queue (“over the owner's concurrent-job limit”) and move to the global queue, oldest first, as yours end. Jobs waiting for other jobs (dependencies) or held by an array's limit wait there too.
queue-limit = You may have at most { $n } unfinished jobs; more is refused (QUEUE_LIMIT).

oom-rule = When a job fails and the last { $kib } KiB of its output show a GPU out-of-memory error, it is retried on a tier with more VRAM, without resubmitting: same place in the queue, same slot. At most { $attempts } attempts; with no larger tier it ends OOM_NO_LARGER_TIER.
oom-path = Escalation:
oom-patterns = What counts as a GPU out-of-memory error (any of these, case-insensitive; admins keep the list):
oom-after = Every attempt uses GPU time and is charged. JOB_ATTEMPT tells the job which attempt it is, so it can resume from its checkpoints in JOB_OUTPUT_DIR. Running out of host memory (RAM) is HOST_OOM and is not retried.

multi-rules = A multi-GPU job runs inside one placement, at most the tier's “max GPUs per job”. A job that no placement could ever fit is refused when submitted (NO_FIT_PLACEMENT).
multi-rank1 = The first job of the queue never gives way. If it needs more GPUs than are free, it reserves the free ones and gathers the rest as they free up (“waiting for N more GPUs”); it jumps to another placement if one frees enough at once. It is charged for what it holds, when it ends, so holding never pushes its own lab back; if another lab's usage puts it behind, it lets go and is charged for what it held.
multi-planned = This cluster runs the planned policy: the first { $depth } jobs of the order get a planned start on the placement that frees first, and GPUs are held for them only shortly before; jobs behind may run on GPUs the plan does not need yet. A job waiting over { $hours } hours goes ahead of fair-share while such jobs use at most { $percent } % of the GPUs.
multi-planned-light = Such overdue jobs never go ahead of light labs' jobs (labs using at most the average of the labs waiting).
multi-planned-light-some = Only the oldest { $ahead } of them go ahead of light labs' jobs (labs using at most the average of the labs waiting).
multi-planned-drains = GPUs left idle waiting for a planned job's start are charged to that job's lab, like held GPUs.
multi-planned-predicted = Plans count on running jobs ending when their users' past jobs say they are expected to end, not at their time limits; a job is still stopped only at its own limit.
multi-seed = This cluster runs the seed policy: only the first job of the queue reserves GPUs.

backfill-on = On: a GPU idle for { $idle } serves the LLM service; research takes it back at once when it needs it.
backfill-off = Off on this cluster: idle GPUs stay idle.
backfill-first = Research always comes first; the service never delays a job.

iso-slurm = Jobs run on the Slurm cluster.
iso-local = Jobs run as processes on this server's machine.
iso-none = No executor runs jobs right now.
iso-uid-yes = Each job runs as its owner's own Unix user: no job can read another person's files or processes.
iso-uid-no = Jobs do NOT run as their owners' own users here.
iso-limits-none = No CPU, memory or process limits are enforced here.
iso-limits = Limits: { $limits } — CPUs and memory in proportion to the job's GPUs.
iso-net-loopback = Network: only loopback inside the job (multi-GPU rendezvous on 127.0.0.1 works); no outside network. Install packages when building a workspace.
iso-net-node = Network: the node's own network, as the cluster configures it.
iso-net-none = Network: NOT isolated here.
iso-scratch-yes = /tmp, /var/tmp and /dev/shm are the job's own and vanish with it.
iso-scratch-no = Scratch folders (/tmp, /dev/shm) are the node's.
iso-userns = Jobs may not create user namespaces.
iso-container = Jobs with a workspace run in its container image ({ $container }).
iso-disk = A job's log may reach { $log } and its output folder { $output }; past that it is stopped (LOG_LIMIT, OUTPUT_LIMIT).
iso-output = Your output is in JOB_OUTPUT_DIR, a folder only you can read.

cancel-grace = Cancelling (or reaching the time limit) sends SIGTERM to the job, waits { $grace } for it to save a checkpoint, then stops it with SIGKILL.

maint-intro = For work on shared storage or Slurm, admins put the cluster in maintenance, shown in a banner on every page:
maint-draining = DRAINING — new jobs are refused; running jobs finish; you may still cancel.
maint-recovery = BACKFILL_RECOVERY — the LLM service is taken back.
maint-active = ACTIVE — operators work; nothing starts.
maint-normal = NORMAL — waiting jobs start again in fair-share order.
maint-now-normal = Now: normal operation.
maint-now = Now: { $phase }, since

sessions-text = A notebook (apps: { $apps }) is a job like any other: it waits in the same queue, is charged the same and is isolated the same. It ends after { $idle } minutes without activity (IDLE); each person may have { $n } at once.
sessions-none = none on this cluster

reason-user-concurrency-limit = over the owner's concurrent-job limit (personal queue)
reason-dependency = waiting for the jobs it depends on to end
reason-waiting-for-higher-rank = waiting for higher-ranked jobs
reason-no-idle-gpu = no idle GPUs fit it yet
reason-maintenance = maintenance: nothing is dispatched
reason-gathering = a multi-GPU job gathering its GPUs, or planned to start at a given time
end-completed = the job exited with code 0
end-nonzero-exit = the job exited with another code
end-time-limit = it reached its time limit
end-cancelled = its owner or an admin cancelled it
end-oom-no-larger-tier = it ran out of GPU memory and no tier has more
end-host-oom = it ran out of host memory (RAM)
end-log-limit = its log grew past the limit
end-output-limit = its output folder grew past the limit
end-executor-lost = its node or process was lost
end-dependency-never-satisfied = a job it depended on ended the wrong way
end-idle = a notebook without activity

## Sign-in and the dashboard

login-tagline = GPU sharing for research labs
login-username = Username
login-password = Password
login-local = Local account (administrators)
login-throttled = Too many failed attempts. Wait a moment and try again.
login-disabled = This account is disabled. Ask an admin.
login-busy = The server is busy checking sign-ins. Try again in a second.
login-refused = The university's directory knows you, but does not let this account in here (no lab group, or an id the platform does not take). Ask an admin.
login-directory = The university's directory cannot be reached just now. Try again in a minute.
login-passwords-off = Passwords here are only for local accounts. Sign in with “{ $button }” instead.
login-wrong = Wrong username or password.
dash-title = Cluster
dash-name = Name
dash-no = no
dash-nodes = Nodes
dash-legend = Legend
dash-use-research = research job
dash-use-backfill = LLM backfill
dash-use-reserved = reserved for the next job
dash-use-idle = idle
dash-mine = My running and waiting jobs
dash-none = None.
dash-submit = Submit a job
dash-notebook = notebook session
dash-labs = Labs' standing
dash-labs-note = Lower recent usage goes first in the queue (usage halves every week).
dash-lab = Lab
dash-usage = Usage (TFLOP·s, decayed)
dash-running = GPUs running
dash-waiting = Jobs waiting

## Reasons with their details

reason-reserving = waiting for { $more } more { $more ->
    [one] GPU
   *[other] GPUs
} on { $node } ({ $tier }), reserved { $have }/{ $need }
reason-planned = planned on { $node } ({ $tier }) at { $time } UTC on { $day }
reason-planned-held = planned on { $node } ({ $tier }) at { $time } UTC on { $day }; { $have } of { $need } GPUs held
reason-array-limit = its array already runs { $n } elements, the most it allows at once
reason-no-idle-gpu-vram = needs a GPU with at least { $gb } GB of VRAM; none of those is idle

## The queue page

queue-title = Queue
queue-intro = This cycle's order: the lab with the least recent usage goes first. Refreshes every 2 s.
queue-global = Global queue
queue-mine = My personal queue
queue-mine-intro = Jobs over your concurrency limit wait here and enter the global queue as yours finish.
queue-nothing = Nothing is waiting.
queue-empty = Empty.
queue-showing = Showing the first { $shown } of { $total } waiting jobs; the whole queue is at /v1/queue.
queue-col-rank = Rank
queue-col-job = Job
queue-col-lab = Lab
queue-col-user = User
queue-col-gpus = GPUs
queue-col-usage = Lab usage (TFLOP·s)
queue-col-since = Waiting since
queue-col-why = Why it waits
queue-col-start = Expected start
queue-col-reservation = Reservation
queue-other-lab = (other lab)
queue-about = about
queue-estimate = (estimate)
queue-reserved = reserved GPUs
queue-on = on

## The job list

jobs-array-title = Array #{ $id }
jobs-intro = Your lab's jobs, newest first.
jobs-array-intro = The array's elements, newest first.
jobs-all = All jobs
jobs-filter = Filter by state
jobs-filter-all = All
jobs-filter-waiting = Waiting
jobs-filter-running = Running
jobs-filter-completed = Completed
jobs-filter-failed = Failed
jobs-filter-cancelled = Cancelled
jobs-older = Older jobs →
jobs-none = No jobs.
jobs-col-job = Job
jobs-col-user = User
jobs-col-state = State
jobs-col-gpus = GPUs
jobs-col-where = Where
jobs-col-submitted = Submitted
jobs-col-ended = Ended
jobs-session-badge = notebook session
jobs-array-row = Array #{ $id } { $name } ({ $total } elements)
jobs-array-summary = { $total } elements ({ $spec }{ $limit }): { $counts }
jobs-array-limit = , at most { $n } at once
jobs-cancel-array = Cancel array…
jobs-cancel-array-question = Cancel every unfinished element?
jobs-cancel-array-yes = Yes, cancel them
jobs-cancel-array-no = Keep them
jobs-array-cancelled = Cancelled.

reason-how = How this works

## The job page

job-title = Job
job-title-of = Job #{ $id } { $name }
job-log = Log
job-no-output = No output yet.
job-earlier = Show earlier output ({ $kib } KiB before this)
job-submitted = Submitted
job-queued = Queued
job-started = Started
job-ended = Ended
job-reserving = Reserving { $have }/{ $need } GPUs on { $node } ({ $tier })
job-gpu-one = 1 GPU
job-gpu-many = { $n } GPUs
job-place = { $gpus } · { $tier } on { $node }
job-not-started = not started yet (at most { $most } attempts)
job-attempt-of = attempt { $n } of at most { $most }
job-hours = { $h } h
job-hours-minutes = { $h } h { $m } min
job-minutes = { $m } min
job-state = State
job-exit-code = {" "}(exit code { $code })
job-owner = Owner
job-gpus = GPUs
job-attempt = Attempt
job-time-limit = Time limit
job-ends-by = {" "}— ends by{" "}
job-ends-by-after = {" "}at the latest
job-estimate = Expected to start about{" "}
job-estimate-after = {" "}— an estimate from the scheduler's forecast
job-element = Element{" "}
job-of = {" "}of{" "}
job-array = array #{ $id }
job-runs-after = Runs after:{" "}
job-now = now
job-last-error = Last dispatch error: { $error }
job-timeline = Timeline
job-attempts = Attempts
job-col-tier = Tier
job-col-node = Node
job-col-started = Started
job-col-ended = Ended
job-col-exit = Exit
job-col-reason = Reason
job-col-usage = Usage (TFLOP·s)
job-col-reserved = of which reserved
job-files = Output files
job-files-none = None yet.
job-bytes = { $n } bytes
job-more-files = and { $n } more files: list them all with GET /v1/jobs/{ $id }/files (a page at a time)
job-cancel = Cancel job…
job-cancel-question = Cancel this job? A running job gets SIGTERM and its grace period to save its work.
job-cancel-yes = Yes, cancel it
job-cancel-no = Keep it

## A session on its job page

session-title = { $app } session
session-waiting = Waiting in the queue
session-waiting-at = Waiting in the queue: place { $rank }
session-starting = Starting { $app }… this page opens it once it answers.
session-open = Open { $app }
session-time-left = Time left: { $left }
session-idle = Nobody has used this session for a while: it ends in { $left } unless you use it (open it, or keep a kernel busy).
session-ended = This session has ended.
session-less-than-minute = less than a minute
session-minutes = { $n ->
        [one] 1 minute
       *[other] { $n } minutes
    }

## The submit form

submit-title = Submit a job
submit-name = Name
submit-script = Script (run with bash)
submit-script-file = …or load it from a file
submit-gpus = GPUs
submit-gpus-help = All on one node, at most the tier's per-job maximum.{" "}
submit-gpus-link = How multi-GPU jobs wait
submit-limit = Time limit (minutes, empty = default)
submit-limit-help = The job is stopped there (SIGTERM, then SIGKILL after a grace).{" "}
submit-limit-link = Limits
submit-vram = Minimum GPU memory (GB, empty = any tier)
submit-vram-help = After a GPU out-of-memory error the job is retried on a larger tier by itself.{" "}
submit-vram-link = Out of GPU memory
submit-workspace = Workspace (container image)
submit-workspace-none = none (run on the node)
submit-workspace-help = Jobs have no network: install packages into a workspace.{" "}
submit-workspace-link = Isolation
submit-after = Run after (e.g. ok:12,any:13 — jobs of your lab; empty = at once)
submit-after-help = ok: once it completes · any: once it ends · notok: once it fails or is cancelled
submit-array = Array (e.g. 0-15%4: 16 copies, at most 4 at once; empty = one job)
submit-env = Environment (KEY=value per line)
submit-env-help = JOB_OUTPUT_DIR, JOB_ATTEMPT and CUDA_VISIBLE_DEVICES are set for you.
submit-button = Submit
submit-paused = Submissions are paused for maintenance ({ $phase }). Running jobs finish; try again when it ends.

## Starting a notebook

notebook-title = Start a notebook
notebook-intro = JupyterLab on a GPU, queued by your lab's fair share like any job, opened here in the browser. It ends at its time limit, when you cancel it, or after an idle hour.
notebook-app = Notebook app
notebook-gpus = Notebook GPUs
notebook-limit = Notebook time limit (minutes, empty = default)
notebook-workspace = Notebook workspace (container image)
notebook-workspace-none = none (the node's own JupyterLab)
notebook-start = Start a notebook

## The usage page

usage-title = Lab usage
usage-report = Monthly report
usage-explain = Usage counts GPU time weighted by the GPU's speed (GPU-seconds × the tier's TFLOPS) and halves every week, so old usage fades. The lab that used least goes first in the queue.
usage-col-lab = Lab
usage-col-usage = Usage now (TFLOP·s)
usage-col-share = Share
usage-col-running = GPUs running
usage-col-waiting = Jobs waiting
usage-30-days = 30 days
usage-last-30 = { $lab }: the last 30 days
usage-standing = Your lab ({ $lab }) used { $share } % of all labs' recent GPU time; { $less ->
        [0] no lab used less, so your waiting jobs are first in line
        [one] 1 lab used less and goes ahead of you
       *[other] { $less } labs used less and go ahead of you
    }{ $more ->
        [0] {""}
        [one] ; 1 lab used more and waits behind you
       *[other] ; { $more } labs used more and wait behind you
    }.
report-title = { $from } to { $to }, by { $by } (raw usage, research and reservation charges, not decayed)
report-month = Month
report-by = By
report-show = Show
report-csv = Download CSV
report-none = No usage in this month.
report-jobs = Jobs
report-gpu-hours = GPU-hours
chart-label = Daily usage of { $lab }, 30 days: { $total } TFLOP·s, { $hours } GPU-hours in all
chart-axis = TFLOP·s per day
chart-day-axis = day (UTC)
chart-hint = {" "}· hover or tab to a day for its values
chart-table = The numbers, day by day
chart-col-day = Day
chart-col-tier = By tier

## The account page

account-with-password = with a password
account-through-university = through the university
account-no-uid = none yet (given at the first job)
account-own-gid = the uid's own
account-lab-admin = set by an admin
account-lab-university = from the university (kept in step at each sign-in)
account-signs-in = Signs in
account-lab = Lab
account-role = Role
account-uid = Jobs run as uid
account-gid = and group (gid)
account-title = Account
account-change-password = Change password
account-current = Current password
account-new = New password (10 characters or more)
account-changed = Password changed.
account-tokens = Personal tokens
account-tokens-intro = For scripts and the jpu command (`jpu login --token`): send it as `Authorization: Bearer <token>`.
account-token-name = Name (what it is for)
account-token-days = Expires in (days, 1 to 365)
account-create-token = Create token
account-copy-now = “{ $name }”: copy it now, it is not shown again.
account-expires = Expires
account-no-tokens = No live tokens.
account-col-name = Name
account-col-created = Created
account-col-used = Last used
account-sign-in-token = (a sign-in)
account-never = never
account-revoke = Revoke

## Notifications on the account page

notify-title = Notifications
notify-latest = Latest deliveries
notify-col-event = Event
notify-col-to = To
notify-col-tries = Tries
notify-col-problem = Problem
notify-saved = Saved.
notify-secret = Copy the webhook's signing secret now: it is not shown again.
notify-signature = Each delivery carries X-JPU-Signature: sha256=<HMAC-SHA256 of the body with it>.
notify-email = E-mail address (empty = no e-mail)
notify-webhook = Webhook URL (http or https; empty = none)
notify-when = Tell me when
notify-save = Save notifications
notify-event-started = a job starts
notify-event-ended = a job ends (with why)
notify-event-retried = a job is retried on a larger GPU after running out of memory

## The admin pages

admin-local-may-use-a-password-when-sign-in-go = {" "}Local: may use a password when sign-in goes through the university (break-glass)
admin-serve-the-llm-on-idle-gpus = {" "}Serve the LLM on idle GPUs
admin-unchanged = (unchanged)
admin-action = Action
admin-add-a-lab = Add a lab
admin-add-a-node = Add a node
admin-add-a-tier = Add a tier
admin-add-a-user = Add a user
admin-add-lab = Add lab
admin-add-node = Add node
admin-add-tier = Add tier
admin-add-user = Add user
admin-admin = Admin
admin-audit-log = Audit log
admin-change-labs-and-users = Change labs and users
admin-change-tiers = Change tiers
admin-command-bash-serve-on-jpu-backfill-port = Command (bash; serve on $JPU_BACKFILL_PORT)
admin-concurrent-jobs-default-2 = Concurrent jobs (default 2)
admin-concurrent-jobs = Concurrent jobs
admin-detail = Detail
admin-display-name = Display name
admin-drain = Drain
admin-edit-a-tier-blank-unchanged = Edit a tier (blank = unchanged)
admin-edit-a-user-blank-unchanged = Edit a user (blank = unchanged)
admin-end-maintenance = End maintenance
admin-endpoint = Endpoint
admin-gpu-out-of-memory-signatures = GPU out-of-memory signatures
admin-gpu-tier = GPU tier
admin-gpus-per-instance = GPUs per instance
admin-gpus = GPUs
admin-idle-gpus-serve-the-llm-service-until-re = Idle GPUs serve the LLM service until research needs them: a dispatch reclaims them first (SIGTERM, grace, SIGKILL). Never charged to a lab.
admin-idle-seconds-before-deploying = Idle seconds before deploying
admin-llm-backfill = LLM backfill
admin-lab = Lab
admin-labs-users = Labs & users
admin-labs-and-users = Labs and users
admin-loading = Loading…
admin-maintenance-audit = Maintenance & audit
admin-maintenance = Maintenance
admin-max-gpus-per-job = Max GPUs per job
admin-max-gpus = Max GPUs
admin-message-shown-to-users = Message shown to users
admin-normal-draining-no-new-submissions-runni = NORMAL → DRAINING (no new submissions; running jobs finish) → BACKFILL_RECOVERY (LLM backfill reclaimed) → ACTIVE (operators may work) → NORMAL.
admin-name-as-slurm-s-gpu-type = Name (as Slurm's GPU type)
admin-name = Name
admin-node = Node
admin-nodes = Nodes
admin-now = Now
admin-number-of-gpus = Number of GPUs
admin-one-per-line-any-case-a-failed-job-whose = One per line, any case: a failed job whose output ends with one is retried on a larger tier
admin-order-higher-better = Order (higher = better)
admin-order = Order
admin-password-10-characters-or-more = Password (10 characters or more)
admin-remove = Remove
admin-reset-password-to = Reset password to
admin-resume = Resume
admin-role = Role
admin-save-backfill-settings = Save backfill settings
admin-save-signatures = Save signatures
admin-save-tier = Save tier
admin-save-user = Save user
admin-settings = Settings
admin-sign-in = Sign-in
admin-since = Since
admin-start-maintenance = Start maintenance
admin-state = State
admin-tflops-fp32 = TFLOPS (FP32)
admin-tflops = TFLOPS
admin-target = Target
admin-tier = Tier
admin-tiers-nodes = Tiers & nodes
admin-tiers-and-nodes = Tiers and nodes
admin-tiers = Tiers
admin-unix-uid-optional-jobs-run-as-it = Unix uid (optional; jobs run as it)
admin-unix-uid = Unix uid
admin-user = User
admin-username = Username
admin-users-marked-university-sign-in-through = Users marked (university) sign in through the university: their lab, role, uid and gid come from it (and its directory) at every sign-in, so they cannot be changed here.
admin-users = Users
admin-vram-gb-field = VRAM (GB)
admin-vram-gb = VRAM GB
admin-when = When
admin-who = Who
admin-role-admin = admin
admin-disable-refuse-sign-in-end-sessions-and = disable: refuse sign-in, end sessions and tokens now
admin-enable = enable
admin-role-researcher = researcher
admin-phase = Phase:
admin-since-lower = since
admin-active = active
admin-inactive = inactive
admin-deactivate = Deactivate
admin-activate = Activate
admin-on = On
admin-off = Off
admin-instances = {" "}— { $n } instance(s) running, { $hours } GPU-hours served
admin-labs = Labs:{" "}
admin-local = {" "}(local)
admin-university = {" "}(university)
admin-disabled = {" "}(disabled)
admin-allocated = { $uid } (allocated)
admin-no-uid = none: jobs are refused
admin-uid-none = Unix uid ("none" removes it)

## E-mail notifications

mail-what-started = started
mail-what-retried = is retried on a larger GPU (attempt { $attempt })
mail-what-ended = ended { $state }
mail-subject = [JPU-Share] job { $id } ({ $name }) { $what }
mail-intro = Job { $id } ({ $name }) of { $lab } { $what }.
mail-state = state
mail-attempt = attempt
mail-where = where
mail-exit = exit code
mail-reason = end reason
mail-off = Turn these off on your account page or with PUT /v1/me/notifications.

# Messages of refused input and other answers the server writes (the
# API's English comes from here; the console shows the reader's language).
# The field an error is about stays in front, as the API names it.
err-internal = internal error
err-too-many-attempts = too many failed sign-ins; retry in { $secs } s
err-wrong-password = wrong username or password
err-account-disabled = this account is disabled; ask an admin
err-passwords-off = password sign-in here is only for local accounts: use "{ $button }" instead
err-maintenance-paused = submissions are paused for maintenance ({ $phase })
err-no-fit = no placement can ever fit { $gpus } GPU(s): the largest request any tier and node can take is { $largest }
err-no-fit-vram = no placement can ever fit { $gpus } GPU(s) with { $vram } GB VRAM: the largest request any tier and node can take is { $largest }
err-queue-limit-full = you already have { $unfinished } unfinished jobs, the most allowed; wait for some to finish or cancel some
err-queue-limit-adding = you have { $unfinished } unfinished jobs; { $adding } more would pass the limit of { $limit } (each array element counts)
err-range = must be between { $min } and { $max }, got { $got }
err-chars-count = must be 1 to { $max } characters, got { $got }
err-printable = must contain printable characters only
err-invisible = must not contain invisible or text-direction characters ({ $char })
err-empty = must not be empty
err-command-size = must be at most 64 KiB, got { $got } bytes
err-nul = must not contain NUL bytes
err-env-count = at most { $max } variables, got { $got }
err-env-name = `{ $name }` is not a valid variable name
err-env-reserved = `{ $name }` is set by JPU-Share and cannot be overridden
err-env-value = value of `{ $name }` must be at most 4096 bytes without NUL
err-at-least = must be at least { $min }, got { $got }
err-time-limit-max = must be at most { $max } (and the tier's maximum), got { $got }
err-chars-max = must be at most { $max } characters
err-array-limit = `%{ $text }`: the limit after % must be a whole number of at least 1
err-array-index-max = index { $index } is over the largest allowed, { $max }
err-array-part = `{ $part }` is not an index or a range (write e.g. "0-15%4" or "0-3,8,10-11")
err-array-backwards = `{ $part }`: a range must not end before it starts
err-array-step = `{ $part }`: the step after : must be at least 1
err-array-size = an array has at most { $max } elements
err-array-twice = an index is listed twice
err-deps-count = at most { $max } dependencies, got { $got }
err-deps-twice = job { $id } is listed twice
err-no-job = no job { $id }
err-deps-other-lab = job { $id } is another lab's; depend on your own lab's jobs
err-deps-never = job { $id } ended { $state }, so `{ $kind }` on it can never be met
err-no-workspace = no workspace named `{ $name }` in lab { $lab }
err-workspace-building = workspace `{ $name }` is still building; submit when it is READY
err-workspace-broken = workspace `{ $name }` is { $status }; create it again to rebuild it
err-one-of = `{ $text }` is not one of { $options }
err-no-uid = your account ({ $user }) has no unix uid, and Slurm runs every job as its user's own uid: ask an admin to set yours
err-not-root = this server does not run as root, so it cannot run jobs isolated from it and from each other: it runs none (an admin may set executor.allow_unisolated on a one-person machine)
err-no-such-job = no such job
err-cancel-not-yours = only the job's owner or an admin may cancel it
err-job-ended = job { $id } already ended ({ $state })
err-past-log = { $offset } is past the end of the log ({ $len } bytes)
err-path-relative = must be a relative path inside the job's output directory
err-path-dotdot = must not contain `..`
err-output-not-yours = logs and output files are readable by the job's owner and admins only
err-no-such-file = no such file in the job's output directory
err-tier-time-limit = must be at most { $max } (the tier maximum), got { $got }
err-sessions-limit = you have { $had } sessions that have not ended, the most one may have (sessions.max_per_user): end one first
err-no-lab-group = { $user } is in no lab group of this cluster (groups matching `{ $pattern }`); ask your lab's head to add you
err-campus-disabled = the account { $user } is disabled here; ask an admin
err-campus-local = { $user } is a local account of this site: sign in with its password
err-campus-bad-name = the university's name `{ $name }` cannot be a user or lab name here (letters, digits, `.`, `_`, `-`; at most 64)
err-no-directory-entry = the university's directory has no entry for { $user }; ask your IT office
err-directory-ambiguous = the university's directory lists { $n } entries named { $user }; ask your IT office
err-uid-taken-directory = the directory's uid { $uid } belongs to another user here ({ $other }); ask an admin
err-campus-not-linked = an account named { $user } exists here but is not linked to your university identity; ask an admin to link it (your identity's subject: { $subject })
err-campus-retry = your account changed while you were signing in; sign in again
err-directory-system-id = the directory gives { $user } the { $attribute } { $id }, a system account's or nobody's (this site takes { $min } or more); ask the directory's administrators
err-name-look-alike = the name `{ $name }` differs from the existing user `{ $other }` only in case; ask an admin
err-campus-link-local = { $user } is a local account: it signs in with its password only and cannot be linked to a university identity
err-campus-link-taken = that university identity is already linked to { $other }
err-campus-link-off = this site has no university sign-in to link an account to
err-no-campus-sign-in = this site has no university sign-in
err-provider-rejected = { $why }
err-campus-no-grant = The university's sign-in gave this site no refresh token, so it could not check later that { $user } is still at the university: the site's operator asks it for one (offline_access in auth.oidc.scopes) or turns that check off (auth.oidc.recheck_seconds = 0).
err-quota-exceeded = your { $place } ({ $path }) holds { $used } bytes, over its quota of { $quota } bytes: free space there first (running jobs go on)
storage-title = Your files' places
storage-home = Home ($HOME)
storage-lab = Lab share ($LAB_DIR)
storage-over = over its quota: new jobs are refused until space is freed
storage-measured = as measured
storage-not-measured = not measured yet (after your first job)
err-device-code-missing = the code POST /v1/auth/device answered
err-device-pending = not approved yet: the person approves it on the page at `verification_uri` (signing in at the university); ask again after `interval` seconds
err-device-expired = expired, already used or unknown: start again
err-device-denied = the sign-in was declined on its approval page
err-no-lab = no lab named `{ $name }`
err-no-such-session = no such session
err-session-not-ready = session { $id } is not ready yet
err-session-ended = session { $id } has ended
err-no-array = no array { $id }
err-cancel-array-not-yours = only the array's owner or an admin may cancel it
err-array-done = array { $id } has no unfinished elements
err-password-length = must be { $min } to 1024 characters
err-current-password = the current password is wrong
err-token-name = 1 to 64 characters (what the token is for)
err-token-name-chars = printable characters only, no invisible or text-direction ones
err-too-many-tokens = you have { $max } named tokens already: revoke one you no longer use first
err-token-gone = the sign-in or token this request came with was ended meanwhile
err-too-many-starts = too many sign-ins were started from your address in the last minute; retry in a minute
err-one-to = must be 1 to { $max }
err-no-such-token = no such token
err-not-url = `{ $text }` is not a URL ({ $why })
err-url-scheme = must be http or https, not { $scheme }
err-url-credentials = must not carry a user name or password (deliveries are listed with their URL)
err-url-host = must name a host
err-url-metadata = `{ $host }` is a cloud metadata service
err-url-port = must name a port
err-resolve-slow = `{ $host }` did not resolve within { $secs } s
err-resolve-failed = cannot resolve `{ $host }`: { $why }
err-resolve-none = `{ $host }` resolves to no address
err-resolve-forbidden = `{ $host }` resolves to { $ip }, { $kind ->
        [link-local] a link-local address
        [metadata] a cloud metadata address
        [not-host] not a host address
        [loopback] a loopback address
        [private] a private address
        [cgnat] a shared (CGNAT) address
        [unique-local] a unique-local address
        [site-local] a site-local address
        [nat64] a NAT64 address
       *[reserved] a reserved address
    }
err-resolve-internal = `{ $host }` resolves to { $ip }, { $kind ->
        [link-local] a link-local address
        [metadata] a cloud metadata address
        [not-host] not a host address
        [loopback] a loopback address
        [private] a private address
        [cgnat] a shared (CGNAT) address
        [unique-local] a unique-local address
        [site-local] a site-local address
        [nat64] a NAT64 address
       *[reserved] a reserved address
    } inside this site's network; webhooks reach such addresses only where an admin allows them (notify.webhook_allow)
err-resolve-not-allowed = `{ $host }` is not among the webhook targets this server allows (notify.webhook_allow)
err-listed-twice = `{ $text }` is listed twice
err-no-smtp = this server sends no e-mail (an admin sets notify.smtp_url); use a webhook
err-not-email = `{ $text }` is not an e-mail address ({ $why })
err-image-chars = must be an image reference of 1 to 256 letters, digits and `._-/:@` (e.g. docker://python:3.11-slim)
err-image-source = must come from docker://, library:// or oras:// (a plain name means Docker Hub)
err-packages-count = at most { $max } packages
err-not-pip = `{ $text }` is not a pip requirement (a name, optional [extras] and version bounds like ==2.4.0)
err-workspace-exists = workspace `{ $name }` already exists in lab { $lab }
err-workspaces-limit = lab { $lab } already has { $count } workspaces, the most a lab may have ({ $max }): remove one or rebuild a FAILED one
err-workspace-build-busy = lab { $lab } is already building workspace `{ $name }` (one build per lab at a time): try again when it is done
err-workspace-builds-full = { $running } workspace builds are running on this server, the most at once: try again in a few minutes
err-not-date = `{ $text }` is not a date written YYYY-MM-DD
err-date-range = `{ $text }` must lie between 1970-01-01 and 9999-12-30
err-from-after-to = { $from } is after `to` ({ $to })
err-report-days = a report covers at most { $max } days
err-before-9999 = must lie before 9999-12-31
err-not-month = `{ $text }` is not a month written YYYY-MM
err-name-printable = must be 1 to 64 printable characters
err-tflops = must be above 0 and at most { $max }, got { $got }
err-tier-exists = tier `{ $name }` already exists
err-no-tier = no tier named `{ $name }`
err-node-no-gpus = must list at least one {"{"}"tier", "count"{"}"}
err-node-gpus-max = at most { $max } GPUs per node, got { $got }
err-node-exists = node `{ $name }` already exists
err-no-node = no node named `{ $name }`
err-node-busy = node `{ $name }` still runs { $busy } job(s) or backfill instance(s); drain it and wait
err-node-draining = node `{ $name }` is already draining
err-node-up = node `{ $name }` is already up
err-node-down = node `{ $name }` is down; it comes back when the executor says so
err-patterns-count = at most { $max }, got { $got }
err-pattern-length = entry { $entry }: must be 1 to { $max } characters
err-pattern-chars = entry { $entry }: printable characters only
err-maintenance-on = maintenance is already on (phase { $phase })
err-maintenance-off = maintenance is not on
err-plain-name = must be 1 to 64 letters, digits, `.`, `_` or `-`, not starting with `.`
err-lab-exists = lab `{ $name }` already exists
err-user-exists = user `{ $name }` already exists
err-uid-regular = must be a regular user's uid (1000 or more)
err-uid-taken = unix_uid { $uid } is already { $other }'s: no two users may share a uid
err-between = must be between { $min } and { $max }
err-no-user = no user named `{ $name }`
err-password-university = { $user }'s password is the university directory's: change it there
err-campus-owned = { $user } signs in through the university, which owns their lab, role and uid
err-self-demote = you cannot take the admin role from yourself
err-self-disable = you cannot disable yourself
err-bytes-no-nul = must be at most { $max } bytes without NUL
err-backfill-command = backfill needs a command to serve the model before it can be enabled
err-env-line = env line { $line }: write KEY=value
err-not-number = `{ $text }` is not a number
err-deps-body = { $why }
err-required = required
err-sign-in = please sign in
err-admins-only = this page is for admins
err-whole-days = a whole number of days
err-after-form = `{ $part }`: write KIND:JOB, e.g. ok:12
err-not-job-id = `{ $text }` is not a job id
oidc-none-title = No university sign-in here
oidc-none-why = This site signs in with passwords only.
oidc-failed-title = Sign-in failed
oidc-retry = Try again in a moment.
oidc-too-many = Too many sign-ins were started from your address in the last minute. Wait a minute and try again.
device-title = Approve a device's sign-in
device-asked = A device calling itself “{ $device }” at the address { $address } asked at { $at } to sign in to JPU-Share as you.
device-code = Its code:
device-continue = Sign in at the university to approve it
device-deny = Decline it
device-approved-title = Device approved
device-approved = “{ $device }” now gets a personal token that acts as you; you can close this page. (Tokens are listed, and revoked, on your account page.)
device-declined-title = Device declined
device-declined = “{ $device }” gets nothing; you can close this page.
device-not-you = If you did not start this yourself, close this page: whoever did would get a token that acts as you.
device-look-up = Look it up
device-unknown-title = No such device sign-in
device-unknown-why = This sign-in request is unknown or has expired. Start it again on the device (jpu login --sso).
oidc-rejected-title = Sign-in refused
oidc-not-started = This sign-in was not started in this browser, or was already used. Start again.
oidc-provider-said = The university's sign-in did not complete: { $why }
oidc-no-code = The answer from the university's sign-in lacks its code or state.
oidc-refused-title = You cannot sign in here
oidc-unavailable-title = Sign-in unavailable
oidc-directory-down = The university's directory cannot be reached. Try again later.
oidc-provider-down = The university's sign-in service cannot be reached. Try again later.
oidc-back = Back to sign-in
err-file-place = `{ $place }` is not a place: use `home` or `lab`
err-dataset-read-only = datasets are read-only
err-file-no-uid = your account ({ $user }) has no unix uid yet, so the site cannot touch files as you: ask an admin to set one
err-file-path = { $detail }
err-file-not-found = no such file or folder: { $path }
err-file-forbidden = you may not do that to { $path } ({ $detail })
err-file-conflict = { $detail }
err-file-range = { $detail }
err-file-too-large = the upload is larger than this site's limit of { $max } bytes (storage.max_upload_mb); nothing was kept
err-file-quota = the upload would take your { $place } past its quota: { $used } of { $quota } bytes are used; nothing was kept
err-no-dataset = no dataset named `{ $name }` is open to your lab
err-dataset-path = `{ $path }` is not an absolute path to a folder on this server
err-dataset-exists = a dataset named `{ $name }` exists already
err-dataset-in-use = dataset `{ $name }` is open to lab { $lab }, which has running jobs: close it to that lab or wait for them
err-dataset-fetching = dataset `{ $name }` is still being fetched; delete it when it is READY or FAILED
err-too-many-requests = you have { $max } open data requests, the most allowed; wait for an admin to decide on them
err-no-data-request = no data request { $id }
err-request-decided = data request { $id } was already decided
err-sha256 = must be 64 hexadecimal digits (a SHA-256)
mail-request-subject = [JPU-Share] data request { $id } ({ $name }) is { $state }
mail-request-intro = Your data request { $id } ({ $name }) is now { $state }.
mail-request-why = admin's reason
mail-request-problem = problem
nav-files = Files
nav-datasets = Datasets
files-home = Home
files-lab = Lab share
files-datasets = Datasets
files-places = Places
files-where = Folder
files-link = a link (not followed)
files-delete = Delete
files-delete-confirm = Delete { $name }? This cannot be undone.
files-name = Name
files-size = Size
files-modified = Modified
files-actions = Actions
files-upload = Upload
files-choose = Choose files to upload
files-drop = …or drop files here. Each goes into this folder; a file of the same name is replaced.
files-failed = Not uploaded:
files-uploaded = Uploaded.
files-new-folder = New folder
files-make-folder = Make folder
datasets-title = Datasets
datasets-intro = Read-only data the admins place for labs. A job sees each dataset open to its lab at $JPU_DATASETS/NAME.
datasets-none = No dataset is open to your lab yet.
datasets-col-name = Name
datasets-col-state = State
datasets-col-size = Size
datasets-col-source = Source
datasets-col-labs = Open to
datasets-every-lab = every lab
datasets-browse = Browse
datasets-request = Ask for data
datasets-request-intro = Give a URL (http or https) and why you need it. An admin decides; the platform fetches it, checks its SHA-256 when you give one, unpacks .tar, .tar.gz and .zip, and tells you on your notification channels.
datasets-name = Name of the dataset
datasets-url = URL
datasets-sha256 = SHA-256 (optional)
datasets-reason = Why you need it
datasets-send = Send the request
datasets-sent = Sent: the admins will decide.
datasets-requests = Requests
datasets-no-requests = No data requests yet.
datasets-col-by = Asked by
datasets-col-when = When
datasets-col-decision = Decision
admin-datasets-register = Register a dataset
admin-datasets-folder = A folder on this server (used as it is)
admin-datasets-or-url = …or a URL to fetch
admin-datasets-labs = Open to labs (comma-separated; empty = every lab)
admin-datasets-description = Description
admin-datasets-change = Open to labs
admin-datasets-open-to = Labs (comma-separated; empty = every lab)
admin-datasets-delete = Delete dataset
admin-datasets-decide = Open requests
admin-datasets-approve = Approve and fetch
admin-datasets-reject = Reject
admin-datasets-reject-reason = Reason (told to the requester)
admin-datasets-no-open = No request waits for a decision.
sec-data = Research data
data-places = Every job and notebook sees the same three places, on storage every node mounts; JOB_OUTPUT_DIR stays each job's own.
data-home = Your home ($HOME): yours alone (mode 0700, your uid), kept across jobs and notebooks; a notebook opens there. Quota here: { $quota }.
data-lab = Your lab's share ($LAB_DIR): read and written by the lab's members (the lab's group, setgid), not by other labs. Quota here: { $quota }.
data-datasets = Datasets ($JPU_DATASETS/NAME): read-only data the admins place for labs; a job sees only those open to its lab. Ask for data by URL on the Datasets page; an admin decides, and the platform fetches it (at most { $max }), checks its SHA-256 and unpacks it so no entry leaves its folder.
data-quota = Usage is measured every { $minutes } minutes and after each job ends. Over its quota, new submits and uploads that would write to a place are refused with QUOTA_EXCEEDED, naming the place, its usage and its quota; a running job is never stopped for it. An upload through the site may be at most { $upload }.
data-as-you = The site touches your files only as you: every listing, upload, download and delete through the site runs with your own uid and groups, never as the server's root, and never follows a link out of the place it was asked about.
datasets-log = fetch log
