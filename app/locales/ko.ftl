# 한국어 콘솔. en.ftl의 모든 키가 여기에도 있어야 합니다(테스트가 확인).
# 플랫폼 용어는 정책 페이지처럼 그대로 둡니다: fair-share, placement,
# 백필(backfill), 티어.

## 머리글, 메뉴, 배너

nav-main = 주 메뉴
nav-dashboard = 대시보드
nav-queue = 대기열
nav-jobs = 작업
nav-submit = 작업 제출
nav-usage = 연구실 사용량
nav-policy = 운영 정책
nav-account = 계정
nav-admin = 관리
nav-sign-in = 로그인
nav-sign-out = 로그아웃
lang-switch = 언어
banner-draining = 점검 모드: DRAINING — 새 작업을 받지 않으며, 실행 중인 작업은 끝까지 실행됩니다.
banner-recovery = 점검 모드: 운영 작업 전에 LLM 백필을 회수하는 중입니다.
banner-active = 점검 중 — 작업이 배정되지 않습니다.
banner-since = 시작:
cluster-down-title = 클러스터에 연결할 수 없음
cluster-down-text = 다시 연결될 때까지 새 작업은 대기열에 남아 있습니다.
not-found = 없는 페이지입니다.
loading = 불러오는 중…

## 단위

unit-second = { $n }초
unit-minute = { $n }분
unit-hour = { $n }시간
unit-day = { $n }일

## 운영 정책 페이지

policy-title = GPU 공유 방식
policy-sections = 목차
sec-overview = 개요
sec-tiers = GPU 티어
sec-scheduling = 배정 정책
sec-fair-share = 공정성 정책 (Fair-share)
sec-queue = 대기열
sec-oom = GPU 메모리 부족 (OOM)
sec-multi-gpu = 멀티 GPU 작업
sec-backfill = LLM 백필
sec-isolation = 격리와 보안
sec-cancel = 작업 취소와 시간 제한
sec-maintenance = 점검 모드
sec-sessions = 노트북
sec-reasons = 작업이 대기하거나 끝난 이유

overview-size = 이 클러스터에는 GPU { $gpus }장이 placement { $placements }개에 있습니다.
overview-rule = GPU는 연구실별 최근 사용량에 따라 공정하게 나눕니다. 사용량이 가장 적은 연구실의 작업이 먼저 배정됩니다.
overview-oom = GPU 메모리가 부족해 실패한 작업은 다시 제출할 필요가 없습니다. 더 큰 GPU에서 자동으로 재시도합니다.
overview-rank1 = 대기열 1순위 작업은 뒤에 있는 작업에 차례를 양보하지 않습니다. 멀티 GPU 작업은 필요한 GPU를 모아 가며 기다립니다.
overview-backfill = 유휴 GPU는 연구 작업이 필요로 할 때까지 LLM 추론 서비스를 처리합니다.
overview-isolation = 모든 작업은 소유자 본인의 권한으로, 자신만의 자원 한도 안에서 격리되어 실행됩니다.

tiers-intro = GPU는 티어 단위로 관리됩니다. 티어는 GPU 모델과 그 메모리(VRAM), 연산 성능으로 정해집니다. 작업은 비어 있고 조건에 맞는 티어 중 가장 좋은 티어에 배정되며, 아래 순서가 그 우선순위입니다.
tiers-col-order = 순위
tiers-col-tier = 티어
tiers-col-vram = VRAM
tiers-col-tflops = TFLOPS
tiers-col-max = 작업당 최대 GPU
tiers-col-limit = 최대 시간 제한
tiers-col-active = 활성
tiers-active-yes = 예
tiers-active-no = 아니요 (새 작업을 받지 않음)
placements-title = Placement
placements-intro = placement는 한 노드에 있는 같은 티어의 GPU 묶음입니다. 작업 하나는 placement 하나 안에서 실행됩니다.
placement-unusable = (지금은 작업을 받지 않음)

policy-cycle = 스케줄러는 { $every }마다(그리고 작업이 제출되거나 끝나는 즉시) 대기 중인 모든 작업을 fair-share 순서로 살펴보고, 빈 GPU에 들어갈 수 있는 작업을 좋은 티어부터 배정합니다.
scheduling-waits = 작업의 크기와 VRAM 조건을 만족하는 빈 GPU가 충분한 placement가 없으면 “맞는 유휴 GPU 없음”으로, GPU는 비어 있지만 앞 순위 작업이 먼저이면 “상위 순위 작업 대기”로 표시됩니다.
scheduling-default-limit = 시간 제한을 정하지 않은 작업의 기본 시간 제한: { $limit }.

fair-order = 대기열은 연구실 사용량 순서로 정렬됩니다. 사용량이 가장 적은 연구실이 먼저이고, 같은 연구실 안에서는 가장 오래 기다린 작업이 먼저입니다.
fair-formula = 사용량 = 점유 GPU 수 × 점유 시간(초) × 티어 TFLOPS
fair-formula-note = (단위: TFLOP·s). 점유 시간이 기준입니다. GPU를 모으며 기다리는 멀티 GPU 작업도 이미 점유한 GPU만큼 가산됩니다.
fair-example = 예를 들어 { $tier }({ $tflops } TFLOPS) 1장을 1시간 쓰면 1 × 3,600 × { $tflops } = { $hour } TFLOP·s입니다. 2장이 필요한 작업이 두 번째 GPU를 기다리며 1장을 10분 선점한 뒤 2장으로 30분 실행했다면 { $run } + { $held } = { $total } TFLOP·s가 가산됩니다.
fair-half-life = 사용량은 { $half }마다 절반으로 줄어듭니다: 현재 사용량 = 누적 사용량 × 0.5 ^ (경과 시간 / { $half }). 최근 많이 쓴 연구실은 더 기다리고, 오래 쓰지 않은 연구실은 자연스럽게 우선순위를 회복합니다.

queue-concurrency = 한 사람당 동시에 실행하거나 글로벌 대기열에서 기다릴 수 있는 작업은 최대 { $n }개입니다(관리자가 사람별로 바꿀 수 있습니다).
queue-yours = 내 한도는 { $n }개입니다.
queue-personal = 그보다 많은 작업은 개인 대기열에서 기다리다가(“동시 실행 한도 초과”), 내 작업이 끝날 때마다 오래된 것부터 글로벌 대기열로 승격됩니다. 다른 작업을 기다리는 작업(의존성)과 배열 작업의 동시 실행 한도에 걸린 작업도 여기서 기다립니다.
queue-limit = 끝나지 않은 작업은 최대 { $n }개까지 가질 수 있으며, 그 이상은 거부됩니다(QUEUE_LIMIT).

oom-rule = 작업이 실패하고 출력의 마지막 { $kib } KiB에 GPU 메모리 부족 오류가 있으면, 다시 제출할 필요 없이 VRAM이 더 큰 티어에서 재시도합니다. 대기열의 자리와 실행 슬롯은 그대로 유지됩니다. 최대 { $attempts }번 시도하며, 더 큰 티어가 없으면 OOM_NO_LARGER_TIER로 끝납니다.
oom-path = 에스컬레이션 순서:
oom-patterns = GPU 메모리 부족으로 판정하는 문구(대소문자 구분 없음, 관리자가 관리합니다):
oom-after = 모든 시도는 GPU 시간을 썼으므로 사용량에 가산됩니다. JOB_ATTEMPT 환경변수로 몇 번째 시도인지 알 수 있으니, JOB_OUTPUT_DIR의 체크포인트에서 학습을 재개하세요. 호스트 메모리(RAM) 부족은 HOST_OOM이며 재시도하지 않습니다.

multi-rules = 멀티 GPU 작업은 placement 하나 안에서, 티어의 “작업당 최대 GPU” 이내로 실행됩니다. 어떤 placement에도 들어갈 수 없는 작업은 제출할 때 거부됩니다(NO_FIT_PLACEMENT).
multi-rank1 = 대기열 1순위 작업은 절대 양보하지 않습니다. 빈 GPU가 부족하면 빈 GPU를 예약(reservation)해 두고 나머지가 빌 때마다 모읍니다(“GPU N장 더 기다리는 중”). 다른 placement에서 한꺼번에 충분히 비면 그쪽으로 옮겨 갑니다. 예약한 GPU의 사용량은 작업이 끝날 때 한꺼번에 가산되므로, 예약 때문에 자기 연구실의 순위가 밀리지는 않습니다. 다른 연구실의 사용량 변화로 1순위에서 밀리면 예약을 내려놓고, 그때까지 점유한 만큼 가산됩니다.
multi-planned = 이 클러스터는 planned 정책으로 운영됩니다. fair-share 순서의 앞쪽 { $depth }개 작업은 가장 먼저 비는 placement에 시작 시각이 계획되고, GPU는 시작 직전에만 확보됩니다. 계획에 아직 필요 없는 GPU에서는 뒤의 작업이 실행될 수 있습니다. { $hours }시간 넘게 기다린 작업은, 그런 작업들이 GPU의 { $percent } % 이내를 쓰는 동안 fair-share보다 앞서 배정됩니다.
multi-planned-light = 이런 작업도 가벼운 랩(대기 중인 랩들의 평균 사용량 이하인 랩)의 작업보다 앞서지는 않습니다.
multi-planned-light-some = 그중 가장 오래 기다린 { $ahead }개만 가벼운 랩(대기 중인 랩들의 평균 사용량 이하인 랩)의 작업보다 앞섭니다.
multi-planned-drains = 계획된 작업의 시작을 기다리며 비어 있는 GPU 시간은, 확보된 GPU처럼 그 작업의 랩에 과금됩니다.
multi-planned-predicted = 계획은 실행 중인 작업이 시간 제한이 아니라, 그 사용자의 지난 작업들로 보아 끝날 것으로 예상되는 시각에 끝난다고 보고 세워집니다. 작업이 강제로 멈추는 것은 여전히 자기 시간 제한에 이르렀을 때뿐입니다.
multi-seed = 이 클러스터는 seed 정책으로 운영됩니다. 대기열 1순위 작업만 GPU를 예약합니다.

backfill-on = 켜짐: { $idle } 동안 유휴 상태인 GPU에서 LLM 서비스가 실행되며, 연구 작업이 필요로 하면 즉시 회수됩니다.
backfill-off = 이 클러스터에서는 꺼져 있습니다: 유휴 GPU는 그대로 비어 있습니다.
backfill-first = 연구 작업이 항상 우선이며, LLM 서비스 때문에 작업이 늦어지는 일은 없습니다.

iso-slurm = 작업은 Slurm 클러스터에서 실행됩니다.
iso-local = 작업은 이 서버 머신의 프로세스로 실행됩니다.
iso-none = 지금은 작업을 실행하는 실행기가 없습니다.
iso-uid-yes = 모든 작업은 소유자 본인의 Unix 사용자로 실행되므로, 다른 사람의 파일이나 프로세스에 접근할 수 없습니다.
iso-uid-no = 이 서버에서는 작업이 소유자 본인의 사용자로 실행되지 않습니다.
iso-limits-none = 이 서버에서는 CPU, 메모리, 프로세스 수 제한이 적용되지 않습니다.
iso-limits = 자원 한도: { $limits } — CPU와 메모리는 작업의 GPU 수에 비례합니다.
iso-net-loopback = 네트워크: 작업 안에서는 루프백만 쓸 수 있습니다(127.0.0.1에서의 멀티 GPU 랑데부는 동작). 외부 네트워크는 차단되므로 필요한 패키지는 워크스페이스를 빌드할 때 설치하세요.
iso-net-node = 네트워크: 클러스터가 설정한 노드의 네트워크를 씁니다.
iso-net-none = 네트워크: 이 서버에서는 격리되지 않습니다.
iso-scratch-yes = /tmp, /var/tmp, /dev/shm은 작업 전용이며 작업이 끝나면 사라집니다.
iso-scratch-no = 임시 폴더(/tmp, /dev/shm)는 노드의 것을 함께 씁니다.
iso-userns = 작업은 사용자 네임스페이스를 만들 수 없습니다.
iso-container = 워크스페이스를 지정한 작업은 그 컨테이너 이미지 안에서 실행됩니다({ $container }).
iso-disk = 작업 로그는 { $log }, 출력 폴더는 { $output }까지 쓸 수 있으며, 넘으면 작업이 중지됩니다(LOG_LIMIT, OUTPUT_LIMIT).
iso-output = 출력은 본인만 읽을 수 있는 폴더 JOB_OUTPUT_DIR에 저장됩니다.

cancel-grace = 작업을 취소하거나 시간 제한에 도달하면 SIGTERM을 보내고, 체크포인트를 저장할 수 있도록 { $grace } 기다린 뒤 SIGKILL로 종료합니다.

maint-intro = 공유 스토리지 교체나 Slurm 점검이 필요하면 관리자가 클러스터를 점검 모드로 전환하며, 모든 페이지 상단에 배너가 표시됩니다:
maint-draining = DRAINING — 새 작업 제출이 거부되고, 실행 중인 작업은 끝까지 실행됩니다. 취소는 할 수 있습니다.
maint-recovery = BACKFILL_RECOVERY — LLM 서비스를 회수합니다.
maint-active = ACTIVE — 운영 작업이 진행되며, 아무 작업도 시작되지 않습니다.
maint-normal = NORMAL — 기다리던 작업이 fair-share 순서대로 다시 시작됩니다.
maint-now-normal = 현재: 정상 운영 중입니다.
maint-now = 현재: { $phase }, 시작 시각

sessions-text = 노트북(앱: { $apps })도 다른 작업과 똑같습니다. 같은 대기열에서 기다리고, 같은 방식으로 사용량이 가산되며, 똑같이 격리됩니다. { $idle }분 동안 활동이 없으면 종료되며(IDLE), 한 사람당 동시에 { $n }개까지 쓸 수 있습니다.
sessions-none = 이 클러스터에는 없음

reason-user-concurrency-limit = 소유자의 동시 실행 한도 초과 (개인 대기열)
reason-dependency = 의존하는 작업이 끝나기를 기다리는 중
reason-waiting-for-higher-rank = 상위 순위 작업 대기
reason-no-idle-gpu = 맞는 유휴 GPU 없음
reason-maintenance = 점검 중: 작업이 배정되지 않음
reason-gathering = 멀티 GPU 작업이 GPU를 모으는 중이거나, 정해진 시각에 시작하도록 계획됨
end-completed = 작업이 종료 코드 0으로 끝남
end-nonzero-exit = 작업이 0이 아닌 종료 코드로 끝남
end-time-limit = 시간 제한에 도달함
end-cancelled = 소유자나 관리자가 취소함
end-oom-no-larger-tier = GPU 메모리가 부족했고 더 큰 티어가 없음
end-host-oom = 호스트 메모리(RAM)가 부족함
end-log-limit = 로그가 한도를 넘음
end-output-limit = 출력 폴더가 한도를 넘음
end-executor-lost = 노드나 프로세스를 잃음
end-dependency-never-satisfied = 의존하던 작업이 조건과 다르게 끝남
end-idle = 활동이 없는 노트북

## 로그인과 대시보드

login-tagline = 연구실을 위한 GPU 공유 플랫폼
login-username = 사용자 이름
login-password = 비밀번호
login-local = 로컬 계정 (관리자)
login-throttled = 로그인 실패가 너무 많습니다. 잠시 뒤에 다시 시도하세요.
login-disabled = 비활성화된 계정입니다. 관리자에게 문의하세요.
login-busy = 서버가 로그인을 확인하느라 바쁩니다. 잠시 뒤에 다시 시도하세요.
login-refused = 대학 디렉터리에 계정이 있지만 이 사이트에는 들어올 수 없습니다(연구실 그룹이 없거나 쓸 수 없는 id). 관리자에게 문의하세요.
login-directory = 지금은 대학 디렉터리에 연결할 수 없습니다. 잠시 후 다시 시도하세요.
login-passwords-off = 이 사이트의 비밀번호는 로컬 계정 전용입니다. “{ $button }”(으)로 로그인하세요.
login-wrong = 사용자 이름 또는 비밀번호가 틀렸습니다.
dash-title = 클러스터
dash-name = 이름
dash-no = 아니요
dash-nodes = 노드
dash-legend = 범례
dash-use-research = 연구 작업
dash-use-backfill = LLM 백필
dash-use-reserved = 다음 작업을 위해 예약됨
dash-use-idle = 유휴
dash-mine = 실행 중이거나 대기 중인 내 작업
dash-none = 없습니다.
dash-submit = 작업 제출하기
dash-notebook = 노트북 세션
dash-labs = 연구실별 현황
dash-labs-note = 최근 사용량이 적은 연구실이 대기열에서 먼저입니다(사용량은 매주 절반으로 줄어듭니다).
dash-lab = 연구실
dash-usage = 사용량 (TFLOP·s, 감쇠 반영)
dash-running = 실행 중인 GPU
dash-waiting = 대기 중인 작업

## 세부 정보가 있는 대기 사유

reason-reserving = { $node }({ $tier })에서 GPU { $more }장 더 기다리는 중, { $have }/{ $need }장 예약됨
reason-planned = { $day } { $time } UTC에 { $node }({ $tier })에서 시작하도록 계획됨
reason-planned-held = { $day } { $time } UTC에 { $node }({ $tier })에서 시작하도록 계획됨, GPU { $need }장 중 { $have }장 확보
reason-array-limit = 배열 작업이 이미 한 번에 허용된 최대치인 { $n }개를 실행 중
reason-no-idle-gpu-vram = VRAM { $gb } GB 이상인 GPU가 필요하지만 유휴 상태인 것이 없음

## 대기열 페이지

queue-title = 대기열
queue-intro = 이번 주기의 순서입니다. 최근 사용량이 가장 적은 연구실이 먼저입니다. 2초마다 새로 고칩니다.
queue-global = 글로벌 대기열
queue-mine = 내 개인 대기열
queue-mine-intro = 동시 실행 한도를 넘은 작업은 여기서 기다리다가, 내 작업이 끝나면 글로벌 대기열로 들어갑니다.
queue-nothing = 대기 중인 작업이 없습니다.
queue-empty = 비어 있습니다.
queue-showing = 대기 중인 작업 { $total }개 중 앞의 { $shown }개를 보여 줍니다. 전체 대기열은 /v1/queue에 있습니다.
queue-col-rank = 순위
queue-col-job = 작업
queue-col-lab = 연구실
queue-col-user = 사용자
queue-col-gpus = GPU
queue-col-usage = 연구실 사용량 (TFLOP·s)
queue-col-since = 대기 시작
queue-col-why = 대기 사유
queue-col-start = 예상 시작
queue-col-reservation = 예약
queue-other-lab = (다른 연구실)
queue-about = 약
queue-estimate = (추정)
queue-reserved = 예약된 GPU
queue-on = 위치:

## 작업 목록

jobs-array-title = 배열 #{ $id }
jobs-intro = 우리 연구실의 작업, 최신순입니다.
jobs-array-intro = 이 배열의 요소, 최신순입니다.
jobs-all = 모든 작업
jobs-filter = 상태로 거르기
jobs-filter-all = 전체
jobs-filter-waiting = 대기 중
jobs-filter-running = 실행 중
jobs-filter-completed = 완료
jobs-filter-failed = 실패
jobs-filter-cancelled = 취소됨
jobs-older = 이전 작업 →
jobs-none = 작업이 없습니다.
jobs-col-job = 작업
jobs-col-user = 사용자
jobs-col-state = 상태
jobs-col-gpus = GPU
jobs-col-where = 위치
jobs-col-submitted = 제출
jobs-col-ended = 종료
jobs-session-badge = 노트북 세션
jobs-array-row = 배열 #{ $id } { $name } (요소 { $total }개)
jobs-array-summary = 요소 { $total }개 ({ $spec }{ $limit }): { $counts }
jobs-array-limit = , 동시에 최대 { $n }개
jobs-cancel-array = 배열 취소…
jobs-cancel-array-question = 끝나지 않은 요소를 모두 취소할까요?
jobs-cancel-array-yes = 예, 모두 취소
jobs-cancel-array-no = 그대로 두기
jobs-array-cancelled = 취소했습니다.

reason-how = 이 규칙의 설명 보기

## 작업 페이지

job-title = 작업
job-title-of = 작업 #{ $id } { $name }
job-log = 로그
job-no-output = 아직 출력이 없습니다.
job-earlier = 이전 출력 보기 (앞으로 { $kib } KiB)
job-submitted = 제출
job-queued = 대기열 진입
job-started = 시작
job-ended = 종료
job-reserving = { $node } ({ $tier })에서 GPU { $have }/{ $need }개 예약 중
job-gpu-one = GPU 1개
job-gpu-many = GPU { $n }개
job-place = { $gpus } · { $node }의 { $tier }
job-not-started = 아직 시작 전 (최대 { $most }회 시도)
job-attempt-of = 최대 { $most }회 중 { $n }번째 시도
job-hours = { $h }시간
job-hours-minutes = { $h }시간 { $m }분
job-minutes = { $m }분
job-state = 상태
job-exit-code = {" "}(종료 코드 { $code })
job-owner = 소유자
job-gpus = GPU
job-attempt = 시도
job-time-limit = 시간 제한
job-ends-by = {" "}— 늦어도{" "}
job-ends-by-after = {" "}에 끝납니다
job-estimate = 예상 시작:{" "}
job-estimate-after = {" "}— 스케줄러 예측에 따른 추정치입니다
job-element = 요소{" "}
job-of = {" "}/{" "}
job-array = 배열 #{ $id }
job-runs-after = 선행 작업:{" "}
job-now = 현재
job-last-error = 마지막 배치 오류: { $error }
job-timeline = 진행 과정
job-attempts = 시도 기록
job-col-tier = 티어
job-col-node = 노드
job-col-started = 시작
job-col-ended = 종료
job-col-exit = 코드
job-col-reason = 사유
job-col-usage = 사용량 (TFLOP·s)
job-col-reserved = 그중 예약분
job-files = 출력 파일
job-files-none = 아직 없습니다.
job-bytes = { $n }바이트
job-more-files = 외 { $n }개 파일: 전체 목록은 GET /v1/jobs/{ $id }/files 로 (한 페이지씩) 볼 수 있습니다
job-cancel = 작업 취소…
job-cancel-question = 이 작업을 취소할까요? 실행 중인 작업은 SIGTERM을 받고, 유예 시간 동안 작업을 저장할 수 있습니다.
job-cancel-yes = 예, 취소합니다
job-cancel-no = 그대로 두기

## 작업 페이지의 세션

session-title = { $app } 세션
session-waiting = 대기열에서 기다리는 중
session-waiting-at = 대기열에서 기다리는 중: { $rank }번째
session-starting = { $app } 시작 중… 응답하면 이 페이지에서 열 수 있습니다.
session-open = { $app } 열기
session-time-left = 남은 시간: { $left }
session-idle = 한동안 이 세션을 아무도 사용하지 않았습니다: 사용하지 않으면(열거나 커널을 계속 실행하지 않으면) { $left } 후에 종료됩니다.
session-ended = 이 세션은 종료되었습니다.
session-less-than-minute = 1분 미만
session-minutes = { $n }분

## 작업 제출 양식

submit-title = 작업 제출
submit-name = 이름
submit-script = 스크립트 (bash로 실행)
submit-script-file = …또는 파일에서 불러오기
submit-gpus = GPU 수
submit-gpus-help = 모두 한 노드에 배정되며, 티어의 작업당 최대치를 넘을 수 없습니다.{" "}
submit-gpus-link = 다중 GPU 작업이 기다리는 방식
submit-limit = 시간 제한 (분, 비우면 기본값)
submit-limit-help = 이 시간에 작업이 중지됩니다 (SIGTERM, 유예 시간 후 SIGKILL).{" "}
submit-limit-link = 제한
submit-vram = 최소 GPU 메모리 (GB, 비우면 모든 티어)
submit-vram-help = GPU 메모리 부족(OOM)으로 실패하면 더 큰 티어에서 자동으로 다시 실행됩니다.{" "}
submit-vram-link = GPU 메모리 부족
submit-workspace = 워크스페이스 (컨테이너 이미지)
submit-workspace-none = 없음 (노드에서 바로 실행)
submit-workspace-help = 작업에서는 네트워크를 쓸 수 없습니다: 패키지는 워크스페이스에 설치하세요.{" "}
submit-workspace-link = 격리
submit-after = 선행 작업 (예: ok:12,any:13 — 우리 연구실 작업; 비우면 바로)
submit-after-help = ok: 완료되면 · any: 끝나면 · notok: 실패하거나 취소되면
submit-array = 배열 (예: 0-15%4: 16개, 동시에 최대 4개; 비우면 작업 하나)
submit-env = 환경 변수 (한 줄에 KEY=value)
submit-env-help = JOB_OUTPUT_DIR, JOB_ATTEMPT, CUDA_VISIBLE_DEVICES는 자동으로 설정됩니다.
submit-button = 제출
submit-paused = 점검 중이라 제출이 멈춰 있습니다 ({ $phase }). 실행 중인 작업은 끝까지 실행됩니다; 점검이 끝나면 다시 시도하세요.

## 노트북 시작

notebook-title = 노트북 시작
notebook-intro = GPU에서 실행되는 JupyterLab입니다. 다른 작업처럼 연구실의 공정성 정책(fair-share)에 따라 대기열에 들어가고, 이 브라우저에서 열립니다. 시간 제한에 이르거나, 취소하거나, 한 시간 동안 사용하지 않으면 종료됩니다.
notebook-app = 노트북 앱
notebook-gpus = 노트북 GPU 수
notebook-limit = 노트북 시간 제한 (분, 비우면 기본값)
notebook-workspace = 노트북 워크스페이스 (컨테이너 이미지)
notebook-workspace-none = 없음 (노드에 설치된 JupyterLab)
notebook-start = 노트북 시작

## 사용량 페이지

usage-title = 연구실 사용량
usage-report = 월별 보고서
usage-explain = 사용량은 GPU 시간에 GPU 속도를 곱해 셉니다 (GPU-초 × 티어의 TFLOPS). 매주 절반으로 줄어들어 오래된 사용량은 점점 사라집니다. 사용량이 가장 적은 연구실이 대기열에서 먼저 갑니다.
usage-col-lab = 연구실
usage-col-usage = 현재 사용량 (TFLOP·s)
usage-col-share = 비율
usage-col-running = 실행 중인 GPU
usage-col-waiting = 대기 중인 작업
usage-30-days = 30일
usage-last-30 = { $lab }: 최근 30일
usage-standing = 우리 연구실({ $lab })은 전체 연구실의 최근 GPU 시간 중 { $share } %를 사용했습니다. { $less ->
        [0] 사용량이 더 적은 연구실이 없어, 우리 대기 작업이 맨 앞입니다
       *[other] 사용량이 더 적은 연구실 { $less }곳이 우리보다 먼저 갑니다
    }{ $more ->
        [0] {""}
       *[other] ; 사용량이 더 많은 연구실 { $more }곳은 우리 뒤에서 기다립니다
    }.
report-title = { $from } ~ { $to }, { $by }별 (감쇠 전 원래 사용량: 연구 작업과 예약 요금)
report-month = 월
report-by = 기준
report-show = 보기
report-csv = CSV 내려받기
report-none = 이 달에는 사용량이 없습니다.
report-jobs = 작업 수
report-gpu-hours = GPU-시간
chart-label = { $lab }의 일별 사용량, 30일: 합계 { $total } TFLOP·s, { $hours } GPU-시간
chart-axis = 일별 TFLOP·s
chart-day-axis = 날짜 (UTC)
chart-hint = {" "}· 날짜에 마우스를 올리거나 Tab으로 이동하면 값이 보입니다
chart-table = 날짜별 수치
chart-col-day = 날짜
chart-col-tier = 티어별

## 계정 페이지

account-with-password = 비밀번호로
account-through-university = 학교 계정으로
account-no-uid = 아직 없음 (첫 작업 때 부여)
account-own-gid = uid와 같은 그룹
account-lab-admin = 관리자가 지정
account-lab-university = 학교 정보에서 (로그인할 때마다 갱신)
account-signs-in = 로그인 방식
account-lab = 연구실
account-role = 역할
account-uid = 작업 실행 uid
account-gid = 그룹 (gid)
account-title = 계정
account-change-password = 비밀번호 변경
account-current = 현재 비밀번호
account-new = 새 비밀번호 (10자 이상)
account-changed = 비밀번호를 바꿨습니다.
account-tokens = 개인 토큰
account-tokens-intro = 스크립트와 jpu 명령(`jpu login --token`)에서 씁니다: `Authorization: Bearer <token>` 헤더로 보내세요.
account-token-name = 이름 (용도)
account-token-days = 만료 (일, 1~365)
account-create-token = 토큰 만들기
account-copy-now = “{ $name }”: 지금 복사하세요. 다시 보여 주지 않습니다.
account-expires = 만료
account-no-tokens = 유효한 토큰이 없습니다.
account-col-name = 이름
account-col-created = 만든 때
account-col-used = 마지막 사용
account-sign-in-token = (로그인)
account-never = 없음
account-revoke = 폐기

## 계정 페이지의 알림

notify-title = 알림
notify-latest = 최근 발송
notify-col-event = 이벤트
notify-col-to = 받는 곳
notify-col-tries = 시도
notify-col-problem = 문제
notify-saved = 저장했습니다.
notify-secret = 웹훅 서명 비밀값을 지금 복사하세요. 다시 보여 주지 않습니다.
notify-signature = 발송마다 X-JPU-Signature: sha256=<이 값으로 만든 본문의 HMAC-SHA256> 헤더가 붙습니다.
notify-email = 이메일 주소 (비우면 이메일 없음)
notify-webhook = 웹훅 URL (http 또는 https; 비우면 없음)
notify-when = 알림 받을 때
notify-save = 알림 설정 저장
notify-event-started = 작업이 시작될 때
notify-event-ended = 작업이 끝날 때 (이유 포함)
notify-event-retried = 메모리 부족으로 더 큰 GPU에서 다시 실행될 때

## 관리 페이지

admin-local-may-use-a-password-when-sign-in-go = {" "}로컬 계정: 학교 계정으로 로그인하도록 설정되어 있어도 비밀번호를 쓸 수 있음 (비상용)
admin-serve-the-llm-on-idle-gpus = {" "}유휴 GPU에서 LLM 서비스 실행
admin-unchanged = (변경 없음)
admin-action = 작업
admin-add-a-lab = 연구실 추가
admin-add-a-node = 노드 추가
admin-add-a-tier = 티어 추가
admin-add-a-user = 사용자 추가
admin-add-lab = 연구실 추가
admin-add-node = 노드 추가
admin-add-tier = 티어 추가
admin-add-user = 사용자 추가
admin-admin = 관리
admin-audit-log = 감사 기록
admin-change-labs-and-users = 연구실과 사용자 변경
admin-change-tiers = 티어 변경
admin-command-bash-serve-on-jpu-backfill-port = 명령 (bash; $JPU_BACKFILL_PORT 에서 서비스)
admin-concurrent-jobs-default-2 = 동시 실행 작업 수 (기본 2)
admin-concurrent-jobs = 동시 실행 작업 수
admin-detail = 세부 내용
admin-display-name = 표시 이름
admin-drain = 비우기
admin-edit-a-tier-blank-unchanged = 티어 수정 (비우면 변경 없음)
admin-edit-a-user-blank-unchanged = 사용자 수정 (비우면 변경 없음)
admin-end-maintenance = 점검 끝내기
admin-endpoint = 엔드포인트
admin-gpu-out-of-memory-signatures = GPU 메모리 부족(OOM) 판별 문구
admin-gpu-tier = GPU 티어
admin-gpus-per-instance = 인스턴스당 GPU 수
admin-gpus = GPU
admin-idle-gpus-serve-the-llm-service-until-re = 유휴 GPU는 연구 작업이 필요로 할 때까지 LLM 서비스를 실행합니다: 작업이 배치되면 먼저 회수됩니다 (SIGTERM, 유예, SIGKILL). 연구실에 요금이 부과되지 않습니다.
admin-idle-seconds-before-deploying = 배치 전 유휴 시간 (초)
admin-llm-backfill = LLM 백필 (backfill)
admin-lab = 연구실
admin-labs-users = 연구실·사용자
admin-labs-and-users = 연구실과 사용자
admin-loading = 불러오는 중…
admin-maintenance-audit = 점검·감사
admin-maintenance = 점검
admin-max-gpus-per-job = 작업당 최대 GPU 수
admin-max-gpus = 최대 GPU
admin-message-shown-to-users = 사용자에게 보일 안내 문구
admin-normal-draining-no-new-submissions-runni = NORMAL → DRAINING (새 제출 없음; 실행 중인 작업은 끝까지 실행) → BACKFILL_RECOVERY (LLM 백필 회수) → ACTIVE (운영자 작업 가능) → NORMAL.
admin-name-as-slurm-s-gpu-type = 이름 (Slurm의 GPU 종류와 같게)
admin-name = 이름
admin-node = 노드
admin-nodes = 노드
admin-now = 현재
admin-number-of-gpus = GPU 수
admin-one-per-line-any-case-a-failed-job-whose = 한 줄에 하나, 대소문자 무관: 실패한 작업의 출력 끝에 이 문구가 있으면 더 큰 티어에서 다시 실행합니다
admin-order-higher-better = 순서 (클수록 좋은 GPU)
admin-order = 순서
admin-password-10-characters-or-more = 비밀번호 (10자 이상)
admin-remove = 삭제
admin-reset-password-to = 새 비밀번호로 재설정
admin-resume = 재개
admin-role = 역할
admin-save-backfill-settings = 백필 설정 저장
admin-save-signatures = 판별 문구 저장
admin-save-tier = 티어 저장
admin-save-user = 사용자 저장
admin-settings = 설정
admin-sign-in = 로그인
admin-since = 시작
admin-start-maintenance = 점검 시작
admin-state = 상태
admin-tflops-fp32 = TFLOPS (FP32)
admin-tflops = TFLOPS
admin-target = 대상
admin-tier = 티어
admin-tiers-nodes = 티어·노드
admin-tiers-and-nodes = 티어와 노드
admin-tiers = 티어
admin-unix-uid-optional-jobs-run-as-it = Unix uid (선택; 작업이 이 uid로 실행됨)
admin-unix-uid = Unix uid
admin-user = 사용자
admin-username = 사용자 이름
admin-users-marked-university-sign-in-through = (학교 계정) 표시가 있는 사용자는 학교 계정으로 로그인합니다: 연구실, 역할, uid, gid는 로그인할 때마다 학교(와 디렉터리)에서 가져오므로 여기서 바꿀 수 없습니다.
admin-users = 사용자
admin-vram-gb-field = VRAM (GB)
admin-vram-gb = VRAM GB
admin-when = 시각
admin-who = 누가
admin-role-admin = admin
admin-disable-refuse-sign-in-end-sessions-and = 사용 중지: 로그인 거부, 세션과 토큰 즉시 종료
admin-enable = 사용
admin-role-researcher = researcher
admin-phase = 단계:
admin-since-lower = · 시작
admin-active = 사용 중
admin-inactive = 사용 안 함
admin-deactivate = 사용 중지
admin-activate = 사용
admin-on = 켜짐
admin-off = 꺼짐
admin-instances = {" "}— 인스턴스 { $n }개 실행 중, 지금까지 { $hours } GPU-시간 제공
admin-labs = 연구실:{" "}
admin-local = {" "}(로컬)
admin-university = {" "}(학교 계정)
admin-disabled = {" "}(사용 중지됨)
admin-allocated = { $uid } (자동 할당)
admin-no-uid = 없음: 작업이 거부됩니다
admin-uid-none = Unix uid ("none"을 넣으면 삭제)

## 이메일 알림

mail-what-started = 시작됨
mail-what-retried = 더 큰 GPU에서 다시 실행 ({ $attempt }번째 시도)
mail-what-ended = 종료됨: { $state }
mail-subject = [JPU-Share] 작업 { $id } ({ $name }) { $what }
mail-intro = { $lab }의 작업 { $id } ({ $name }): { $what }
mail-state = 상태
mail-attempt = 시도
mail-where = 위치
mail-exit = 종료 코드
mail-reason = 종료 사유
mail-off = 알림은 계정 페이지나 PUT /v1/me/notifications 로 끌 수 있습니다.

# 서버가 쓰는 메시지: 거부된 입력과 그 밖의 답 (API의 영어는 en.ftl에서 옵니다).
# 오류가 가리키는 필드 이름은 API의 이름 그대로 앞에 둡니다.
err-internal = 내부 오류가 났습니다
err-too-many-attempts = 로그인 실패가 너무 많습니다. { $secs }초 뒤에 다시 시도하세요
err-wrong-password = 사용자 이름 또는 비밀번호가 틀렸습니다
err-account-disabled = 이 계정은 비활성화되었습니다. 관리자에게 문의하세요
err-passwords-off = 이곳의 비밀번호 로그인은 로컬 계정 전용입니다. 대신 "{ $button }"을(를) 사용하세요
err-maintenance-paused = 점검 중이라 제출이 멈춰 있습니다 ({ $phase })
err-no-fit = 어떤 placement에도 GPU { $gpus }장은 들어가지 않습니다. 티어와 노드가 받을 수 있는 가장 큰 요청은 { $largest }장입니다
err-no-fit-vram = VRAM { $vram } GB인 GPU { $gpus }장이 들어가는 placement는 없습니다. 티어와 노드가 받을 수 있는 가장 큰 요청은 { $largest }장입니다
err-queue-limit-full = 끝나지 않은 작업이 이미 { $unfinished }개로 한도에 닿았습니다. 일부가 끝나기를 기다리거나 취소하세요
err-queue-limit-adding = 끝나지 않은 작업이 { $unfinished }개입니다. { $adding }개를 더하면 한도 { $limit }개를 넘습니다 (배열 원소도 하나씩 셉니다)
err-range = { $min }에서 { $max } 사이여야 합니다 (받은 값: { $got })
err-chars-count = 1~{ $max }자여야 합니다 (받은 길이: { $got }자)
err-printable = 출력 가능한 문자만 쓸 수 있습니다
err-invisible = 보이지 않는 문자나 텍스트 방향 문자를 쓸 수 없습니다 ({ $char })
err-empty = 비워 둘 수 없습니다
err-command-size = 64 KiB 이하여야 합니다 (받은 크기: { $got }바이트)
err-nul = NUL 바이트를 포함할 수 없습니다
err-env-count = 변수는 { $max }개까지입니다 (받은 개수: { $got })
err-env-name = `{ $name }`은(는) 올바른 변수 이름이 아닙니다
err-env-reserved = `{ $name }`은(는) JPU-Share가 정하는 값이라 바꿀 수 없습니다
err-env-value = `{ $name }`의 값은 NUL 없이 4096바이트 이하여야 합니다
err-at-least = { $min } 이상이어야 합니다 (받은 값: { $got })
err-time-limit-max = { $max } 이하여야 하고 티어의 최대값도 넘을 수 없습니다 (받은 값: { $got })
err-chars-max = { $max }자 이하여야 합니다
err-array-limit = `%{ $text }`: % 뒤의 한도는 1 이상의 정수여야 합니다
err-array-index-max = 인덱스 { $index }은(는) 허용되는 최대값 { $max }보다 큽니다
err-array-part = `{ $part }`은(는) 인덱스나 범위가 아닙니다 (예: "0-15%4", "0-3,8,10-11")
err-array-backwards = `{ $part }`: 범위의 끝이 시작보다 앞설 수 없습니다
err-array-step = `{ $part }`: : 뒤의 간격은 1 이상이어야 합니다
err-array-size = 배열의 원소는 { $max }개까지입니다
err-array-twice = 같은 인덱스가 두 번 있습니다
err-deps-count = 의존성은 { $max }개까지입니다 (받은 개수: { $got })
err-deps-twice = 작업 { $id }이(가) 두 번 있습니다
err-no-job = 작업 { $id }은(는) 없습니다
err-deps-other-lab = 작업 { $id }은(는) 다른 연구실의 작업입니다. 자기 연구실의 작업에만 의존할 수 있습니다
err-deps-never = 작업 { $id }이(가) { $state }(으)로 끝나서 `{ $kind }` 조건은 결코 충족될 수 없습니다
err-no-workspace = { $lab } 연구실에 `{ $name }`(이)라는 워크스페이스가 없습니다
err-workspace-building = 워크스페이스 `{ $name }`은(는) 아직 빌드 중입니다. READY가 되면 제출하세요
err-workspace-broken = 워크스페이스 `{ $name }`은(는) { $status } 상태입니다. 다시 만들어 새로 빌드하세요
err-one-of = `{ $text }`은(는) { $options } 중 하나가 아닙니다
err-no-uid = 계정({ $user })에 unix uid가 없습니다. Slurm은 모든 작업을 사용자 본인의 uid로 실행하므로, 관리자에게 uid 설정을 요청하세요
err-not-root = 이 서버는 root로 실행되지 않아 작업을 서버와 서로로부터 격리할 수 없으므로 작업을 실행하지 않습니다 (1인용 머신이라면 관리자가 executor.allow_unisolated를 설정할 수 있습니다)
err-no-such-job = 그런 작업은 없습니다
err-cancel-not-yours = 작업의 소유자나 관리자만 취소할 수 있습니다
err-job-ended = 작업 { $id }은(는) 이미 끝났습니다 ({ $state })
err-past-log = { $offset }은(는) 로그의 끝({ $len }바이트)을 넘습니다
err-path-relative = 작업 출력 디렉터리 안의 상대 경로여야 합니다
err-path-dotdot = `..`을 포함할 수 없습니다
err-output-not-yours = 로그와 출력 파일은 작업 소유자와 관리자만 읽을 수 있습니다
err-no-such-file = 작업 출력 디렉터리에 그런 파일이 없습니다
err-tier-time-limit = 티어 최대값인 { $max } 이하여야 합니다 (받은 값: { $got })
err-sessions-limit = 끝나지 않은 세션이 이미 { $had }개로 한 사람이 가질 수 있는 최대치입니다 (sessions.max_per_user). 하나를 먼저 끝내세요
err-no-lab-group = { $user }은(는) 이 클러스터의 어떤 연구실 그룹(`{ $pattern }`에 맞는 그룹)에도 속해 있지 않습니다. 연구실 책임자에게 추가를 요청하세요
err-campus-disabled = { $user } 계정은 이곳에서 비활성화되었습니다. 관리자에게 문의하세요
err-campus-local = { $user }은(는) 이 사이트의 로컬 계정입니다. 비밀번호로 로그인하세요
err-campus-bad-name = 대학의 이름 `{ $name }`은(는) 이곳의 사용자나 연구실 이름으로 쓸 수 없습니다 (영문자, 숫자, `.`, `_`, `-`; 64자 이하)
err-no-directory-entry = 대학 디렉터리에 { $user } 항목이 없습니다. 전산 부서에 문의하세요
err-directory-ambiguous = 대학 디렉터리에 { $user }(이)라는 항목이 { $n }개 있습니다. 전산 부서에 문의하세요
err-uid-taken-directory = 디렉터리의 uid { $uid }은(는) 이곳의 다른 사용자({ $other })의 것입니다. 관리자에게 문의하세요
err-campus-not-linked = 이곳에 { $user } 계정이 있지만 귀하의 대학 신원과 연결되어 있지 않습니다. 관리자에게 연결을 요청하세요 (귀하의 신원 subject: { $subject })
err-campus-retry = 로그인하는 동안 계정이 바뀌었습니다. 다시 로그인하세요
err-directory-system-id = 디렉터리가 { $user }에게 준 { $attribute } { $id }은(는) 시스템 계정이나 nobody의 것입니다 (이 사이트는 { $min } 이상만 받습니다). 디렉터리 관리자에게 문의하세요
err-name-look-alike = 이름 `{ $name }`은(는) 기존 사용자 `{ $other }`와(과) 대소문자만 다릅니다. 관리자에게 문의하세요
err-campus-link-local = { $user }은(는) 로컬 계정입니다. 비밀번호로만 로그인하며 대학 신원과 연결할 수 없습니다
err-campus-link-taken = 그 대학 신원은 이미 { $other }에 연결되어 있습니다
err-campus-link-off = 이 사이트에는 계정을 연결할 대학 로그인이 없습니다
err-no-campus-sign-in = 이 사이트에는 대학 로그인이 없습니다
err-provider-rejected = 대학 로그인이 거부되었습니다: { $why }
err-campus-no-grant = 대학 로그인이 이 사이트에 갱신 토큰을 주지 않아, { $user } 님이 여전히 대학 소속인지 나중에 확인할 수 없습니다. 사이트 운영자가 토큰을 요청하도록(auth.oidc.scopes에 offline_access) 설정하거나 그 확인을 끄십시오(auth.oidc.recheck_seconds = 0).
err-quota-exceeded = { $place }({ $path })에 { $used }바이트가 있어 할당량 { $quota }바이트를 넘었습니다. 먼저 그곳의 공간을 비우세요 (실행 중인 작업은 계속됩니다)
storage-title = 파일 위치
storage-home = 홈 ($HOME)
storage-lab = 연구실 공유 ($LAB_DIR)
storage-over = 할당량 초과: 공간을 비울 때까지 새 작업이 거절됩니다
storage-measured = 측정 시각
storage-not-measured = 아직 측정되지 않음 (첫 작업 후)
err-device-code-missing = POST /v1/auth/device가 준 코드가 필요합니다
err-device-pending = 아직 승인되지 않았습니다. `verification_uri` 페이지에서 (대학 로그인으로) 승인한 뒤 `interval`초 후에 다시 요청하세요
err-device-expired = 만료되었거나 이미 쓰였거나 알 수 없는 코드입니다. 처음부터 다시 시작하세요
err-device-denied = 승인 페이지에서 로그인이 거절되었습니다
err-no-lab = `{ $name }`(이)라는 연구실이 없습니다
err-no-such-session = 그런 세션은 없습니다
err-session-not-ready = 세션 { $id }은(는) 아직 준비되지 않았습니다
err-session-ended = 세션 { $id }은(는) 끝났습니다
err-no-array = 배열 { $id }은(는) 없습니다
err-cancel-array-not-yours = 배열의 소유자나 관리자만 취소할 수 있습니다
err-array-done = 배열 { $id }에 끝나지 않은 원소가 없습니다
err-password-length = { $min }~1024자여야 합니다
err-current-password = 현재 비밀번호가 틀렸습니다
err-token-name = 1~64자로, 토큰의 용도를 적으세요
err-token-name-chars = 출력 가능한 문자만 쓸 수 있고, 보이지 않는 문자나 텍스트 방향 문자는 안 됩니다
err-too-many-tokens = 이름 있는 토큰이 이미 { $max }개 있습니다. 쓰지 않는 토큰을 먼저 폐기하세요
err-token-gone = 이 요청에 쓴 로그인이나 토큰이 그 사이에 끝났습니다
err-too-many-starts = 지난 1분 동안 귀하의 주소에서 너무 많은 로그인이 시작되었습니다. 1분 후에 다시 시도하세요
err-one-to = 1~{ $max }이어야 합니다
err-no-such-token = 그런 토큰은 없습니다
err-not-url = `{ $text }`은(는) URL이 아닙니다 ({ $why })
err-url-scheme = http나 https여야 합니다 ({ $scheme }은(는) 안 됩니다)
err-url-credentials = 사용자 이름이나 비밀번호를 넣을 수 없습니다 (전송 기록에 URL이 그대로 표시됩니다)
err-url-host = 호스트를 적어야 합니다
err-url-metadata = `{ $host }`은(는) 클라우드 메타데이터 서비스입니다
err-url-port = 포트를 적어야 합니다
err-resolve-slow = `{ $host }`의 주소를 { $secs }초 안에 찾지 못했습니다
err-resolve-failed = `{ $host }`의 주소를 찾을 수 없습니다: { $why }
err-resolve-none = `{ $host }`에 해당하는 주소가 없습니다
err-resolve-forbidden = `{ $host }`의 주소는 { $ip }(으)로, { $kind ->
        [link-local] 링크 로컬 주소
        [metadata] 클라우드 메타데이터 주소
        [not-host] 호스트 주소가 아닌 것
        [loopback] 루프백 주소
        [private] 사설 주소
        [cgnat] 공유(CGNAT) 주소
        [unique-local] 고유 로컬 주소
        [site-local] 사이트 로컬 주소
        [nat64] NAT64 주소
       *[reserved] 예약된 주소
    }입니다
err-resolve-internal = `{ $host }`의 주소는 { $ip }(으)로, 이 사이트 네트워크 안의 { $kind ->
        [link-local] 링크 로컬 주소
        [metadata] 클라우드 메타데이터 주소
        [not-host] 호스트 주소가 아닌 것
        [loopback] 루프백 주소
        [private] 사설 주소
        [cgnat] 공유(CGNAT) 주소
        [unique-local] 고유 로컬 주소
        [site-local] 사이트 로컬 주소
        [nat64] NAT64 주소
       *[reserved] 예약된 주소
    }입니다. 관리자가 허용한 곳(notify.webhook_allow)에만 웹훅을 보낼 수 있습니다
err-resolve-not-allowed = `{ $host }`은(는) 이 서버가 허용하는 웹훅 대상(notify.webhook_allow)이 아닙니다
err-listed-twice = `{ $text }`이(가) 두 번 있습니다
err-no-smtp = 이 서버는 이메일을 보내지 않습니다 (관리자가 notify.smtp_url을 설정해야 합니다). 웹훅을 사용하세요
err-not-email = `{ $text }`은(는) 이메일 주소가 아닙니다 ({ $why })
err-image-chars = 영문자, 숫자, `._-/:@`로 된 1~256자의 이미지 참조여야 합니다 (예: docker://python:3.11-slim)
err-image-source = docker://, library://, oras:// 중 하나에서 와야 합니다 (이름만 쓰면 Docker Hub입니다)
err-packages-count = 패키지는 { $max }개까지입니다
err-not-pip = `{ $text }`은(는) pip 요구 사항이 아닙니다 (이름, 선택적인 [extras], ==2.4.0 같은 버전 조건)
err-workspace-exists = { $lab } 연구실에 워크스페이스 `{ $name }`이(가) 이미 있습니다
err-workspaces-limit = { $lab } 연구실은 이미 워크스페이스가 { $count }개로, 연구실당 최대치({ $max })입니다. 하나를 지우거나 FAILED인 것을 다시 빌드하세요
err-workspace-build-busy = { $lab } 연구실은 이미 워크스페이스 `{ $name }`을(를) 빌드하고 있습니다 (연구실당 한 번에 하나). 끝나면 다시 시도하세요
err-workspace-builds-full = 이 서버에서 워크스페이스 빌드가 { $running }개 돌고 있어 동시 최대치입니다. 몇 분 뒤 다시 시도하세요
err-not-date = `{ $text }`은(는) YYYY-MM-DD 형식의 날짜가 아닙니다
err-date-range = `{ $text }`은(는) 1970-01-01과 9999-12-30 사이여야 합니다
err-from-after-to = { $from }이(가) `to`({ $to })보다 뒤입니다
err-report-days = 보고서는 최대 { $max }일을 다룹니다
err-before-9999 = 9999-12-31 전이어야 합니다
err-not-month = `{ $text }`은(는) YYYY-MM 형식의 월이 아닙니다
err-name-printable = 출력 가능한 문자 1~64자여야 합니다
err-tflops = 0보다 크고 { $max } 이하여야 합니다 (받은 값: { $got })
err-tier-exists = 티어 `{ $name }`은(는) 이미 있습니다
err-no-tier = `{ $name }`(이)라는 티어가 없습니다
err-node-no-gpus = {"{"}"tier", "count"{"}"}를 하나 이상 적어야 합니다
err-node-gpus-max = 노드당 GPU는 { $max }장까지입니다 (받은 값: { $got })
err-node-exists = 노드 `{ $name }`은(는) 이미 있습니다
err-no-node = `{ $name }`(이)라는 노드가 없습니다
err-node-busy = 노드 `{ $name }`에서 아직 작업이나 백필 인스턴스 { $busy }개가 돌고 있습니다. drain한 뒤 기다리세요
err-node-draining = 노드 `{ $name }`은(는) 이미 drain 중입니다
err-node-up = 노드 `{ $name }`은(는) 이미 켜져 있습니다
err-node-down = 노드 `{ $name }`은(는) 꺼져 있습니다. executor가 알리면 돌아옵니다
err-patterns-count = { $max }개까지입니다 (받은 개수: { $got })
err-pattern-length = { $entry }번째 항목: 1~{ $max }자여야 합니다
err-pattern-chars = { $entry }번째 항목: 출력 가능한 문자만 쓸 수 있습니다
err-maintenance-on = 점검이 이미 진행 중입니다 (단계 { $phase })
err-maintenance-off = 점검 중이 아닙니다
err-plain-name = 영문자, 숫자, `.`, `_`, `-`로 된 1~64자여야 하며 `.`로 시작할 수 없습니다
err-lab-exists = 연구실 `{ $name }`은(는) 이미 있습니다
err-user-exists = 사용자 `{ $name }`은(는) 이미 있습니다
err-uid-regular = 일반 사용자의 uid(1000 이상)여야 합니다
err-uid-taken = unix_uid { $uid }은(는) 이미 { $other }의 것입니다. 두 사용자가 uid를 함께 쓸 수 없습니다
err-between = { $min }에서 { $max } 사이여야 합니다
err-no-user = `{ $name }`(이)라는 사용자가 없습니다
err-password-university = { $user }의 비밀번호는 대학 디렉터리의 것입니다. 그곳에서 바꾸세요
err-campus-owned = { $user }은(는) 대학 로그인을 쓰며, 연구실·역할·uid는 대학이 관리합니다
err-self-demote = 자기 자신의 관리자 역할을 뺏을 수 없습니다
err-self-disable = 자기 자신을 비활성화할 수 없습니다
err-bytes-no-nul = NUL 없이 { $max }바이트 이하여야 합니다
err-backfill-command = 백필을 켜려면 먼저 모델을 서빙할 명령이 있어야 합니다
err-env-line = env { $line }번째 줄: KEY=value 형식으로 쓰세요
err-not-number = `{ $text }`은(는) 숫자가 아닙니다
err-deps-body = { $why }
err-required = 필수 항목입니다
err-sign-in = 로그인하세요
err-admins-only = 관리자 전용 페이지입니다
err-whole-days = 일 수를 정수로 적으세요
err-after-form = `{ $part }`: KIND:JOB 형식으로 쓰세요 (예: ok:12)
err-not-job-id = `{ $text }`은(는) 작업 ID가 아닙니다
oidc-none-title = 대학 로그인이 없습니다
oidc-none-why = 이 사이트는 비밀번호로만 로그인합니다.
oidc-failed-title = 로그인 실패
oidc-retry = 잠시 뒤 다시 시도하세요.
oidc-too-many = 지난 1분 동안 귀하의 주소에서 너무 많은 로그인이 시작되었습니다. 1분 후에 다시 시도하세요.
device-title = 장치 로그인 승인
device-asked = 스스로를 “{ $device }”(이)라고 부르는 장치가 주소 { $address }에서 { $at }에 귀하로 JPU-Share에 로그인하려고 요청했습니다.
device-code = 코드:
device-continue = 대학에 로그인해 승인하기
device-deny = 거절하기
device-approved-title = 장치 승인됨
device-approved = “{ $device }”(은)는 이제 귀하로 행동하는 개인 토큰을 받습니다. 이 페이지를 닫아도 됩니다. (토큰은 계정 페이지에서 보고 폐기할 수 있습니다.)
device-declined-title = 장치 거절됨
device-declined = “{ $device }”(은)는 아무것도 받지 못합니다. 이 페이지를 닫아도 됩니다.
device-not-you = 직접 시작한 것이 아니라면 이 페이지를 닫으세요. 요청한 사람이 귀하로 행동하는 토큰을 받게 됩니다.
device-look-up = 찾기
device-unknown-title = 그런 장치 로그인이 없습니다
device-unknown-why = 이 로그인 요청을 알 수 없거나 만료되었습니다. 장치에서 다시 시작하세요 (jpu login --sso).
oidc-rejected-title = 로그인 거부됨
oidc-not-started = 이 로그인은 이 브라우저에서 시작되지 않았거나 이미 쓰였습니다. 처음부터 다시 하세요.
oidc-provider-said = 대학 로그인이 끝나지 않았습니다: { $why }
oidc-no-code = 대학 로그인의 응답에 code나 state가 없습니다.
oidc-refused-title = 이곳에 로그인할 수 없습니다
oidc-unavailable-title = 로그인할 수 없음
oidc-directory-down = 대학 디렉터리에 연결할 수 없습니다. 나중에 다시 시도하세요.
oidc-provider-down = 대학 로그인 서비스에 연결할 수 없습니다. 나중에 다시 시도하세요.
oidc-back = 로그인으로 돌아가기
err-file-place = `{ $place }`는 장소가 아닙니다: `home` 또는 `lab`을 쓰세요
err-dataset-read-only = 데이터셋은 읽기 전용입니다
err-file-no-uid = 계정({ $user })에 아직 유닉스 uid가 없어 사이트가 본인으로서 파일을 다룰 수 없습니다: 관리자에게 설정을 요청하세요
err-file-path = { $detail }
err-file-not-found = 그런 파일이나 폴더가 없습니다: { $path }
err-file-forbidden = { $path }에 그 작업을 할 수 없습니다 ({ $detail })
err-file-conflict = { $detail }
err-file-range = { $detail }
err-file-too-large = 업로드가 이 사이트의 한도 { $max }바이트(storage.max_upload_mb)보다 큽니다. 아무것도 남기지 않았습니다
err-file-quota = 업로드하면 { $place }의 할당량을 넘습니다: { $quota }바이트 중 { $used }바이트 사용 중. 아무것도 남기지 않았습니다
err-no-dataset = 연구실에 열린 `{ $name }` 데이터셋이 없습니다
err-dataset-path = `{ $path }`는 이 서버의 폴더를 가리키는 절대 경로가 아닙니다
err-dataset-exists = `{ $name }` 데이터셋이 이미 있습니다
err-dataset-in-use = `{ $name }` 데이터셋은 실행 중인 작업이 있는 { $lab } 연구실에 열려 있습니다: 그 연구실에 닫거나 작업이 끝나기를 기다리세요
err-dataset-fetching = `{ $name }` 데이터셋은 아직 받는 중입니다. READY나 FAILED가 된 뒤 지우세요
err-too-many-requests = 열린 데이터 요청이 허용된 최대인 { $max }개입니다. 관리자의 결정을 기다리세요
err-no-data-request = 데이터 요청 { $id }가 없습니다
err-request-decided = 데이터 요청 { $id }는 이미 결정되었습니다
err-sha256 = 16진수 64자리(SHA-256)여야 합니다
mail-request-subject = [JPU-Share] 데이터 요청 { $id } ({ $name }): { $state }
mail-request-intro = 데이터 요청 { $id } ({ $name })이(가) 이제 { $state } 상태입니다.
mail-request-why = 관리자의 사유
mail-request-problem = 문제
nav-files = 파일
nav-datasets = 데이터셋
files-home = 홈
files-lab = 연구실 공유
files-datasets = 데이터셋
files-places = 장소
files-where = 폴더
files-link = 링크 (따라가지 않음)
files-delete = 삭제
files-delete-confirm = { $name }을(를) 삭제할까요? 되돌릴 수 없습니다.
files-name = 이름
files-size = 크기
files-modified = 수정 시각
files-actions = 동작
files-upload = 업로드
files-choose = 업로드할 파일 고르기
files-drop = …또는 여기에 파일을 끌어 놓으세요. 이 폴더에 들어가며, 같은 이름의 파일은 바뀝니다.
files-failed = 업로드하지 못함:
files-uploaded = 업로드했습니다.
files-new-folder = 새 폴더
files-make-folder = 폴더 만들기
datasets-title = 데이터셋
datasets-intro = 관리자가 연구실을 위해 두는 읽기 전용 데이터입니다. 작업은 연구실에 열린 데이터셋을 $JPU_DATASETS/NAME에서 봅니다.
datasets-none = 아직 연구실에 열린 데이터셋이 없습니다.
datasets-col-name = 이름
datasets-col-state = 상태
datasets-col-size = 크기
datasets-col-source = 출처
datasets-col-labs = 열린 연구실
datasets-every-lab = 모든 연구실
datasets-browse = 둘러보기
datasets-request = 데이터 요청
datasets-request-intro = URL(http 또는 https)과 필요한 이유를 적으세요. 관리자가 결정하면 플랫폼이 받아 SHA-256을 확인하고(주어진 경우) .tar, .tar.gz, .zip을 풀고 알림 채널로 알려 드립니다.
datasets-name = 데이터셋 이름
datasets-url = URL
datasets-sha256 = SHA-256 (선택)
datasets-reason = 필요한 이유
datasets-send = 요청 보내기
datasets-sent = 보냈습니다: 관리자가 결정합니다.
datasets-requests = 요청
datasets-no-requests = 아직 데이터 요청이 없습니다.
datasets-col-by = 요청자
datasets-col-when = 시각
datasets-col-decision = 결정
admin-datasets-register = 데이터셋 등록
admin-datasets-folder = 이 서버의 폴더 (그대로 사용)
admin-datasets-or-url = …또는 받아 올 URL
admin-datasets-labs = 열 연구실 (쉼표로 구분, 비우면 모든 연구실)
admin-datasets-description = 설명
admin-datasets-change = 연구실에 열기
admin-datasets-open-to = 연구실 (쉼표로 구분, 비우면 모든 연구실)
admin-datasets-delete = 데이터셋 삭제
admin-datasets-decide = 열린 요청
admin-datasets-approve = 승인하고 받기
admin-datasets-reject = 거절
admin-datasets-reject-reason = 사유 (요청자에게 전달)
admin-datasets-no-open = 결정을 기다리는 요청이 없습니다.
sec-data = 연구 데이터
data-places = 모든 작업과 노트북은 모든 노드가 마운트하는 저장소의 같은 세 장소를 봅니다. JOB_OUTPUT_DIR은 작업마다 따로입니다.
data-home = 홈($HOME): 본인만 쓰는 곳(모드 0700, 본인 uid)으로 작업과 노트북을 넘어 남고, 노트북이 여기서 열립니다. 이 사이트의 할당량: { $quota }.
data-lab = 연구실 공유($LAB_DIR): 연구실 구성원이 읽고 쓰며(연구실 그룹, setgid) 다른 연구실은 못 봅니다. 이 사이트의 할당량: { $quota }.
data-datasets = 데이터셋($JPU_DATASETS/NAME): 관리자가 연구실을 위해 두는 읽기 전용 데이터로, 작업은 자기 연구실에 열린 것만 봅니다. 데이터셋 페이지에서 URL로 요청하면 관리자가 결정하고, 플랫폼이 받아(최대 { $max }) SHA-256을 확인하고 어떤 항목도 폴더 밖으로 나가지 않게 풉니다.
data-quota = 사용량은 { $minutes }분마다, 그리고 작업이 끝날 때마다 잽니다. 할당량을 넘은 장소에 쓰는 새 제출과 업로드는 장소·사용량·할당량을 밝힌 QUOTA_EXCEEDED로 거절되며, 실행 중인 작업은 그 때문에 멈추지 않습니다. 사이트를 통한 업로드는 최대 { $upload }입니다.
data-as-you = 사이트는 본인의 파일을 본인으로서만 다룹니다: 사이트를 통한 목록, 업로드, 다운로드, 삭제는 모두 본인의 uid와 그룹으로 실행되고, 서버의 root로는 절대 실행되지 않으며, 요청한 장소 밖으로 이어지는 링크는 따라가지 않습니다.
datasets-log = 받기 기록
