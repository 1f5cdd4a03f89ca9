"""A deterministic generator of realistic lessons for the benchmarks.

``cases(n)`` yields ``n`` agent runs over 45 topics (refunds, deploys, CI, certificates, DNS,
databases, package registries, auth tokens, queues, caches, Kubernetes, email, payments, ...),
each a task text, tool calls with error texts (``LockHeldError``, ``HTTP 401``, ``exit 2``,
``ETIMEDOUT`` ...), the host's check and its outcome, spread over five tenants and fifteen
scopes. Case ``i`` depends only on ``i`` and the seed, so a smaller corpus is a prefix of a
larger one. Free words (service names, codenames, customers, notes) are drawn Zipf-like from a
vocabulary of several thousand words.

A case becomes a stored lesson two ways:
- ``record(mem, case)``: the real recorder path, ``mem.run(...)`` → ``tool`` → ``check`` → ``finish``;
- ``experience(case)``: an ``Experience`` built with ``afteraction.testing.make_experience``,
  in the shape ``distill`` gives, for fast bulk loading with ``Memory.add_many``.

``queries(n)`` gives task texts for the next run: topic problems reworded, and some that
match nothing in the corpus.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from itertools import accumulate
from typing import Any

from afteraction import Experience, Memory, Scenario, Scope, Solution, Status, Tried
from afteraction import error_class as _error_class
from afteraction.testing import make_experience

__all__ = [
    "QUERY_SCOPE",
    "SCOPES",
    "TOPICS",
    "VERSION",
    "Call",
    "Case",
    "case",
    "cases",
    "experience",
    "experiences",
    "queries",
    "record",
    "vocabulary",
]

#: Bump when the generated text changes: cached databases are keyed by it.
VERSION = 1
SEED = 20260101
BASE_TIME = datetime(2025, 9, 1, tzinfo=timezone.utc)

# One topic a paragraph (its lines join with spaces), fields separated by " | ":
#   key | subjects | problems (stored wording) | tools | errors | fixes | check | asks (query wording)
# Items are separated by "; ". A fix is "arg=value that failed>value that worked".
_TOPICS = """
refunds | refund for order {n}; refund request {n}; customer refund on ticket {n}; partial refund for invoice {n} |
is stuck in pending; was issued twice; never reached the card; is blocked by a held lock | run_refund_check;
issue_refund; lookup_order | LockHeldError: refund lock is held by another worker; HTTP 409 Conflict from the
payments gateway; ETIMEDOUT while calling the ledger | strategy=retry>wait-for-lock; channel=card>original-method |
refund-issued | refund stuck pending; refund not showing on the customer card; duplicate refund issued for an order

deploys | deploy of {svc} {ver}; rollout of {svc} to production; canary release of {svc}; blue-green deploy for
{svc} | failed health checks; hangs at 40 percent; rolled back automatically; left two versions serving traffic |
deploy_service; check_health; rollback_release | exit 1: helm upgrade failed: timed out waiting for the condition;
HTTP 503 Service Unavailable from the readiness probe; DeployLockError: another deploy is in progress |
wait=false>true; strategy=all-at-once>rolling | deploy-healthy | deployment failing health checks; rollout stuck
halfway; release rolled back on its own

ci | CI pipeline for {svc}; nightly build of {svc}; pull request {n} checks; integration test job {n} | fails on a
flaky test; times out after 60 minutes; cannot fetch dependencies; runs out of disk | run_pipeline; rerun_job;
clear_runner_cache | exit 2: pytest found failing tests; Timeout: job exceeded 60 minutes; ENOSPC: no space left on
device | cache=warm>cold; shard=1>4 | pipeline-green | build red because of a flaky test; CI job timing out; runner
disk full during build

certificates | TLS certificate for {svc}; wildcard certificate on {host}; mTLS client cert for {svc}; certificate
chain of the {code} gateway | expired overnight; fails renewal; is missing an intermediate; has the wrong common
name | renew_certificate; inspect_chain; reload_proxy | CertificateExpiredError: certificate has expired; HTTP 429
Too Many Requests from the ACME directory; SSLError: unable to get local issuer certificate |
challenge=http-01>dns-01; bundle=leaf>fullchain | cert-valid | certificate expired; TLS renewal failing; missing
intermediate certificate in chain

dns | DNS record for {svc}; CNAME for the {code} portal; zone transfer for {region}; MX records of the marketing
domain | does not resolve; points at the old load balancer; returns NXDOMAIN intermittently; propagates slowly |
update_record; query_resolver; flush_dns_cache | NXDOMAIN: name does not exist; ETIMEDOUT: resolver did not answer;
HTTP 400 Bad Request: invalid record type | ttl=86400>300; resolver=local>authoritative | dns-resolves | domain not
resolving; stale DNS pointing at the old host; NXDOMAIN for a service hostname

databases | database migration {n} on {svc}; primary Postgres for {svc}; read replica in {region}; schema change for
the {code} table | is locked by a long transaction; lags behind by minutes; runs out of connections; deadlocks on
startup | run_migration; kill_query; check_replication | LockNotAvailable: could not obtain lock on relation;
OperationalError: too many connections for role; DeadlockDetected: deadlock detected | lock_timeout=0>5s;
pool_size=200>40 | migration-applied | migration blocked by a lock; replica lag growing; database connection pool
exhausted

registries | package publish of {svc} {ver}; npm install in {svc}; wheel upload for the {code} library; private
registry mirror | is rejected by the registry; resolves the wrong version; fails with an integrity error; cannot
authenticate | publish_package; resolve_dependencies; rotate_registry_token | HTTP 403 Forbidden: you do not have
permission to publish; EINTEGRITY: sha512 checksum mismatch; HTTP 401 Unauthorized from the registry |
registry=public>private; lockfile=ignore>frozen | package-published | cannot publish the package; npm integrity
checksum error; package registry auth failing

tokens | API token for {svc}; OAuth refresh token of the {code} integration; service account key for {svc}; SSO
session for the {cust} workspace | expired mid-run; is rejected with 401; was revoked by rotation; lacks the needed
scope | refresh_token; exchange_credentials; list_scopes | HTTP 401 Unauthorized: token expired; TokenRevokedError:
refresh token was revoked; HTTP 403 Forbidden: insufficient_scope | grant=refresh_token>client_credentials;
scope=read>read-write | auth-ok | API token expired with 401; OAuth refresh failing; missing scope for an API call

queues | message queue for {svc}; dead letter queue of the {code} consumer; Kafka topic {code}-events; SQS queue in
{region} | is backing up; redelivers the same message; drops messages under load; has a stuck consumer |
drain_queue; replay_dead_letters; restart_consumer | ConsumerLagExceeded: lag above 100000; VisibilityTimeout:
message redelivered; KafkaError: leader not available | batch=1>100; ack=auto>manual | queue-drained | queue backlog
growing; messages redelivered again and again; consumer stuck on a topic

caches | Redis cache for {svc}; CDN cache of the {code} site; memcached pool in {region}; query cache of the
reporting API | serves stale data; evicts hot keys; stampedes after a deploy; is full | purge_cache; warm_cache;
resize_cache | OOM command not allowed when used memory > maxmemory; HTTP 504 Gateway Timeout from the origin;
ConnectionError: Redis connection refused | ttl=0>600; policy=noeviction>allkeys-lru | cache-fresh | stale cache
after a deploy; redis out of memory; cache stampede on cold start

kubernetes | pod {svc}-{n}; Kubernetes deployment {svc}; node pool in {region}; cronjob {code}-cleanup | is in
CrashLoopBackOff; is evicted for memory; cannot pull its image; stays pending unscheduled | describe_pod;
patch_deployment; drain_node | CrashLoopBackOff: back-off restarting failed container; ErrImagePull: manifest
unknown; OOMKilled: container exceeded memory limit | memory=256Mi>1Gi; imagePullPolicy=Always>IfNotPresent |
pod-ready | pod crashlooping; image pull error on a node; pod OOMKilled

email | password reset email for {cust}; transactional mail from {svc}; newsletter send to the {code} list; SMTP
relay in {region} | bounces as spam; never arrives; is rate limited by the provider; has broken links | send_email;
check_dmarc; inspect_bounce | SMTPDataError: 550 rejected by policy; HTTP 429 Too Many Requests from the mail API;
SMTPAuthenticationError: 535 authentication failed | dkim=off>on; rate=500>50 | email-delivered | emails going to
spam; reset email not arriving; mail provider rate limit

payments | card payment for order {n}; subscription charge of {cust}; payout to merchant {n}; checkout session {n} |
is declined; is charged twice; is stuck in processing; fails 3-D Secure | capture_payment; retry_charge;
lookup_payment_intent | CardDeclinedError: insufficient funds; HTTP 402 Payment Required; IdempotencyError: key
reused with different parameters | idempotency_key=new>reuse; capture=immediate>manual | payment-captured | payment
declined at checkout; double charge on a card; payment stuck processing

invoices | invoice {n} for {cust}; monthly invoice run; VAT invoice in {region}; credit note {n} | has the wrong
tax; was not generated; shows the old price; fails to render as PDF | generate_invoice; recalculate_tax; render_pdf
| TaxRateNotFound: no rate for region; TemplateError: missing variable total; exit 1: wkhtmltopdf crashed |
tax_mode=exclusive>inclusive; template=v1>v2 | invoice-correct | invoice tax wrong; invoice not generated this
month; invoice pdf broken

backups | nightly backup of {svc}; snapshot of the {code} volume; point in time restore for {svc}; backup job in
{region} | did not run; is corrupt; restore takes hours; fills the bucket | run_backup; verify_snapshot;
restore_database | exit 3: pg_dump aborted; ChecksumMismatch: snapshot checksum differs; HTTP 507 Insufficient
Storage | compression=none>zstd; parallel=1>8 | backup-verified | backup failed overnight; corrupt snapshot;
database restore too slow

logging | log shipping from {svc}; structured logs of the {code} worker; audit log in {region}; log retention policy
| stopped arriving; loses fields; floods the index; leaks customer emails | tail_logs; restart_shipper;
update_pipeline | BufferOverflowError: output buffer full; HTTP 413 Payload Too Large from the collector;
ParseError: invalid JSON at line 1 | batch_size=10000>1000; format=text>json | logs-flowing | logs missing from the
dashboard; log shipper buffer full; log parsing errors

monitoring | alert for {svc} latency; dashboard of the {code} cluster; uptime check on {host}; SLO burn rate alert |
fires constantly; never fires; shows no data; pages the wrong team | silence_alert; update_rule; test_probe |
NoDataError: query returned no series; HTTP 500 Internal Server Error from the metrics API; Timeout: probe timed out
| threshold=100ms>400ms; window=1m>10m | alert-correct | noisy alert paging all night; alert not firing; dashboard
has no data

flags | feature flag {code}-beta; rollout of the {code} flag; kill switch for {svc}; experiment {n} | is on for
everyone; does not toggle; serves different values per region; is stuck at 5 percent | toggle_flag;
inspect_targeting; sync_flags | FlagNotFound: unknown flag key; HTTP 409 Conflict: flag version changed;
StaleConfigError: SDK cache older than 10 minutes | percentage=100>5; stream=false>true | flag-consistent | feature
flag not toggling; flag on for all users; flag values differ by region

search | search index of {svc}; Elasticsearch cluster in {region}; reindex job {n}; autocomplete for the {code}
catalog | returns no results; is red; stalls while reindexing; misses new products | reindex; check_cluster_health;
update_mapping | ClusterBlockException: index read-only; HTTP 429 Too Many Requests: es_rejected_execution;
MapperParsingException: failed to parse field | refresh=1s>30s; shards=1>6 | index-green | product search returns
nothing; elasticsearch cluster red; reindex stalled

buckets | S3 bucket for {svc}; upload of export {n}; object lifecycle rule; signed URL for the {code} report |
returns access denied; truncates the upload; deletes objects early; expires too soon | put_object;
update_bucket_policy; presign_url | HTTP 403 AccessDenied; EntityTooLarge: upload exceeds 5 GB; ExpiredToken:
request signature expired | multipart=false>true; expires=60>3600 | object-available | S3 access denied; large
upload failing; signed URL expired

networking | VPN tunnel to {region}; load balancer for {svc}; firewall rule for {host}; peering between the {code}
networks | drops packets; returns 502; blocks health checks; flaps every hour | trace_route; update_security_group;
restart_tunnel | ECONNRESET: connection reset by peer; HTTP 502 Bad Gateway; EHOSTUNREACH: no route to host |
mtu=1500>1400; idle_timeout=60>350 | network-reachable | load balancer 502 errors; vpn tunnel flapping; firewall
blocking the health check

git | merge of branch {code}; rebase of pull request {n}; monorepo checkout in CI; git hooks in {svc} | has
conflicts; rewrites history; is too slow; rejects the push | merge_branch; resolve_conflicts;
configure_sparse_checkout | exit 1: merge conflict in package.json; HTTP 403: protected branch hook declined;
Timeout: clone exceeded 20 minutes | depth=0>1; strategy=merge>rebase | branch-merged | merge conflicts on a branch;
push rejected by protected branch; slow git clone

docker | Docker image for {svc}; base image upgrade to {ver}; multi-arch build of the {code} agent; container
registry cleanup | is too large; fails to build on arm64; has a critical CVE; cannot start | build_image;
scan_image; push_image | exit 125: docker run failed; exec format error; ScanFailed: 3 critical vulnerabilities |
platform=linux-amd64>linux-arm64; base=ubuntu>distroless | image-built | docker build failing on arm; container
image too big; CVE in the base image

terraform | Terraform plan for {region}; state file of the {code} stack; provider upgrade to {ver}; module for {svc}
| is locked; shows unexpected drift; fails to apply; wants to destroy the database | terraform_plan; force_unlock;
import_resource | Error acquiring the state lock: ConditionalCheckFailedException; exit 1: Error: Provider produced
inconsistent result; ResourceInUse: cannot delete | lock=true>false; refresh=false>true | plan-clean | terraform
state locked; infrastructure drift in the plan; apply wants to destroy a resource

secrets | secret rotation for {svc}; Vault lease of the {code} role; KMS key in {region}; env file on {host} | broke
the app; expired; cannot decrypt; leaked into logs | rotate_secret; renew_lease; decrypt_value | PermissionDenied:
vault token lacks policy; InvalidCiphertextException; LeaseExpired: lease not found | ttl=1h>24h;
version=latest>pinned | secret-valid | secret rotation broke the service; vault lease expired; kms decrypt failing

schedulers | scheduled job {code}-sync; cron task on {host}; Airflow DAG {code}; batch export {n} | ran twice;
skipped a day; runs in the wrong timezone; never finishes | trigger_job; inspect_schedule; clear_task_instance |
DuplicateRunError: run already exists for date; Timeout: task exceeded SLA; exit 137: killed | timezone=local>UTC;
concurrency=2>1 | job-complete | cron job ran twice; scheduled task skipped a day; DAG never finishes

ratelimits | partner API calls from {svc}; GitHub API usage of the {code} bot; geocoding requests; webhook fan-out
in {region} | hit the rate limit; get throttled at peak; are retried in a storm; exhaust the daily quota |
check_quota; enable_backoff; batch_requests | HTTP 429 Too Many Requests; QuotaExceeded: daily limit reached;
RetryStormError: 10000 retries in a minute | backoff=none>exponential; batch=1>50 | within-limits | API rate limited
at peak; throttled by a partner; daily quota exhausted

webhooks | webhook from the {code} provider; Stripe webhook endpoint; delivery {n} to {cust}; signing secret of
{svc} | fails the signature check; arrives out of order; is delivered three times; times out | verify_signature;
replay_webhook; update_endpoint | SignatureVerificationError: no signatures found matching; HTTP 408 Request
Timeout; DuplicateEventError: event already processed | tolerance=0>300; async=false>true | webhook-processed |
webhook signature invalid; duplicate webhook deliveries; webhook timing out

mobile | iOS build {ver}; Android release of the {code} app; app store review; push notification certificate | is
rejected by review; crashes on launch; fails code signing; drops push notifications | upload_build; resign_app;
send_test_push | exit 65: xcodebuild failed: code signing; HTTP 400 BadDeviceToken; ReviewRejected: guideline 2.1 |
profile=development>distribution; track=production>beta | release-approved | iOS code signing fails; app crashes on
launch; push notifications not delivered

pipelines | ETL job {code}; dbt model {code}_daily; Spark job {n}; warehouse load for {region} | produces
duplicates; fails on a null; runs out of memory; loads late | run_dbt; backfill_partition; inspect_lineage |
IntegrityError: duplicate key value violates unique constraint; NullPointerException at column customer_id;
OutOfMemoryError: Java heap space | incremental=false>true; partitions=10>200 | data-fresh | ETL duplicates rows;
dbt model failing on a null; spark job out of memory

models | model serving for {code}; embedding job {n}; GPU node in {region}; feature store sync | returns slow
predictions; drifts from training; runs out of GPU memory; serves an old version | deploy_model; evaluate_model;
resize_gpu_pool | CUDA error: out of memory; HTTP 504 Gateway Timeout from inference; ModelNotFound: version 12
missing | batch_size=64>8; precision=fp32>fp16 | model-serving | model inference slow; cuda out of memory on GPU;
serving a stale model version

accounts | account of {cust}; login for user {n}; two-factor reset for {cust}; account merge request {n} | is locked
out; cannot reset the password; shows another user's data; is stuck in verification | unlock_account; reset_mfa;
merge_accounts | AccountLockedError: too many failed attempts; HTTP 422 Unprocessable Entity: email already taken;
VerificationTimeout: code expired | method=sms>totp; notify=false>true | account-restored | user locked out of the
account; cannot reset password; two factor reset for a customer

shipping | shipment {n}; shipping label for order {n}; carrier integration with {code}; customs form for {region} |
is stuck in transit; fails to print a label; shows the wrong address; is held at customs | create_label;
track_shipment; update_address | AddressValidationError: postal code invalid; HTTP 503 from the carrier API;
CustomsHold: missing HS code | carrier=ground>express; validate=false>true | label-created | shipment stuck in
transit; shipping label error; package held in customs

inventory | stock level for SKU {n}; warehouse sync in {region}; reservation for order {n}; inventory import from
{code} | goes negative; is out of sync; double reserves; drops rows on import | sync_inventory; release_reservation;
import_csv | OversellError: stock below zero; CSVError: line 4021 has 9 fields; LockTimeout: reservation lock wait
exceeded | mode=eventual>strict; delimiter=comma>semicolon | stock-consistent | inventory out of sync with the
warehouse; negative stock; csv import dropping rows

localization | translation of the {code} page; locale files of {svc}; date format in {region}; right to left layout
| shows raw keys; breaks plurals; uses the wrong currency; overlaps text | sync_translations; validate_locale;
render_preview | MissingTranslation: key checkout.title; ICUFormatError: plural rule missing; exit 1: i18n lint
failed | fallback=none>en; format=icu>legacy | locale-complete | missing translations on a page; wrong currency
format; plural form broken

performance | p99 latency of {svc}; checkout page load; slow query in the {code} report; memory leak in {svc} |
doubled after release {ver}; exceeds the budget; spikes at noon; grows until restart | profile_endpoint; add_index;
capture_heap_dump | Timeout: request exceeded 30s; SlowQuery: 12.4s seq scan on orders; MemoryError: heap grew past
limit | index=none>btree; workers=2>8 | latency-ok | high latency after a release; slow query in a report; memory
leak until restart

scanning | dependency scan of {svc}; SAST run on pull request {n}; container scan for the {code} image; secret
scanning alert | reports a critical CVE; flags a false positive; blocks the merge; finds a leaked key | run_scanner;
suppress_finding; upgrade_dependency | VulnerabilityFound: CVE-2024-3094 in xz; exit 2: semgrep findings;
SecretDetected: AWS key in config.yml | severity=low>high; upgrade=minor>patch | scan-clean | critical vulnerability
in a dependency; false positive security scan; leaked secret key alert

metering | usage metering for {cust}; overage charge on plan {code}; billing export to the warehouse; seat count for
{cust} | double counts events; misses a day; charges the old rate; goes negative | recompute_usage;
reconcile_billing; export_usage | ReconciliationError: totals differ by 1043; HTTP 409 Conflict: period closed;
ValueError: negative quantity | window=calendar>rolling; dedupe=false>true | usage-reconciled | usage double
counted; overage charged at the wrong rate; billing export missing a day

tickets | support ticket {n}; escalation for {cust}; SLA timer on ticket {n}; macro {code}-reply | is routed to the
wrong queue; breaches the SLA; sends a duplicate reply; loses attachments | route_ticket; pause_sla; merge_tickets |
RoutingError: no queue matches rule; SLABreach: first response overdue; HTTP 413 attachment too large |
priority=normal>urgent; queue=general>billing | ticket-resolved | ticket routed to the wrong queue; SLA breach on an
escalation; duplicate replies sent to a customer

frontend | checkout page of {svc}; React bundle for the {code} dashboard; CSS build; service worker on {host} |
renders blank; is too large; breaks in Safari; caches an old version | build_bundle; run_e2e; clear_service_worker |
TypeError: Cannot read properties of undefined; exit 1: webpack compiled with errors; ChunkLoadError: loading chunk
7 failed | sourcemaps=true>false; target=es5>es2019 | page-renders | blank page after a deploy; javascript bundle
too big; chunk load error in the browser

clocks | clock skew on {host}; daylight saving switch in {region}; timestamp parsing in {svc}; NTP sync on the
{code} fleet | drifts by minutes; shifts reports by an hour; rejects ISO dates; breaks token validation |
sync_clock; normalize_timestamps; check_ntp | ClockSkewError: skew 312s exceeds 60s; ValueError: invalid isoformat
string; JWTError: token used before issued | source=local>pool-ntp; tz=naive>aware | clock-synced | clock drift on a
host; daylight saving bug in reports; ISO timestamp parse error

uploads | avatar upload for {cust}; CSV upload {n}; video transcoding of {code}; document preview | fails over 10
MB; is stuck processing; produces a corrupt file; shows the wrong orientation | upload_file; transcode_media;
generate_preview | HTTP 413 Payload Too Large; FFmpegError: invalid data found when processing input; Timeout:
transcoding exceeded 15 minutes | chunked=false>true; codec=h265>h264 | upload-processed | upload fails for a large
file; video transcoding stuck; corrupt uploaded file

ssh | SSH access to {host}; bastion host in {region}; deploy key for {svc}; jump box of the {code} team | is
refused; hangs at login; rejects the key; was lost after rotation | add_authorized_key; check_sshd;
rotate_deploy_key | Permission denied (publickey); ETIMEDOUT: connect to port 22; HostKeyMismatch: remote host
identification changed | key_type=rsa>ed25519; port=22>2222 | ssh-ok | ssh permission denied; bastion login hangs;
ssh host key changed

config | config of {svc}; YAML settings for the {code} worker; environment variables on {host}; Helm values in
{region} | has a typo; differs between regions; is not reloaded; overrides the secret | validate_config;
diff_environments; reload_config | YAMLError: mapping values are not allowed here; KeyError: DATABASE_URL;
ConfigDrift: 7 keys differ | reload=restart>hot; source=file>configmap | config-valid | typo in the service config;
settings differ between regions; missing environment variable

privacy | data deletion request for {cust}; export of personal data {n}; consent records in {region}; retention
purge job | misses a table; runs past the deadline; deletes too much; exports unencrypted | locate_personal_data;
run_erasure; encrypt_export | ErasureIncomplete: 3 tables still reference the subject; DeadlineExceeded: 30 day
limit; PermissionError: export bucket not encrypted | scope=primary>all-stores; dry_run=false>true |
request-fulfilled | GDPR deletion incomplete; personal data export past the deadline; data export not encrypted
"""


@dataclass(frozen=True, slots=True)
class Topic:
    key: str
    subjects: tuple[str, ...]
    problems: tuple[str, ...]
    tools: tuple[str, ...]
    errors: tuple[str, ...]
    fixes: tuple[tuple[str, str, str], ...]
    check: str
    asks: tuple[str, ...]


def _parse_topics(table: str) -> tuple[Topic, ...]:
    topics = []
    for paragraph in table.strip().split("\n\n"):
        line = " ".join(paragraph.split("\n"))
        key, subjects, problems, tools, errors, fixes, check, asks = (f.strip() for f in line.split(" | "))

        def items(field: str) -> tuple[str, ...]:
            return tuple(item.strip() for item in field.split("; "))

        parsed_fixes = []
        for fix in items(fixes):
            arg, values = fix.split("=", 1)
            bad, good = values.split(">", 1)
            parsed_fixes.append((arg, bad, good))
        topics.append(
            Topic(
                key,
                items(subjects),
                items(problems),
                items(tools),
                items(errors),
                tuple(parsed_fixes),
                check,
                items(asks),
            )
        )
    return tuple(topics)


TOPICS = _parse_topics(_TOPICS)
_TOPIC = {topic.key: topic for topic in TOPICS}

# -- free vocabulary ------------------------------------------------------------------------

_NOUNS = """
account agreement alarm allowance amount analysis appliance approval archive area array asset audit backlog
balance bandwidth banner batch benchmark bill blueprint board bond branch budget buffer bundle button cabinet
calendar campaign capacity card carrier catalog category channel chart checklist circuit claim client cluster
column commitment component console contract controller counter coupon courier credit cursor dashboard dataset
deadline delivery department deposit device diagram digest directory discount dispatch document draft driver
entry envelope estimate event exception exchange experiment extract factory feature feed field figure filter
fleet folder forecast form formula frame fund gateway grid guide handler handbook header holiday hook image
import incident index inquiry instance intake interval inventory item journal kernel keyboard label ladder
launch layer layout ledger library license limit listing locker manifest margin market matrix meeting member
memo menu message meter milestone mirror module monitor mortgage notice object offer office onboarding option
order outage outline owner package panel parcel partner patch payload payroll pension period permit pilot
pipeline plan platform policy pool portal portfolio position premium preview price printer priority procedure
profile program project promotion proposal prototype provider purchase quarter query quota quote rack ratio
receipt record region register release renewal report request reservation resource response review reward
roster route ruleset runbook sample schedule screen script season section segment sensor server session
settlement shelf shift signal sketch slot snapshot socket spreadsheet sprint stage statement station status
storefront strategy stream subscription summary supplier survey switch table target tariff template tenant
terminal territory thread threshold ticket timeline token toolkit tracker transaction transfer trial trigger
tunnel upgrade vendor version voucher wallet warehouse warranty webinar widget window workflow workshop zone
"""
_ADJECTIVES = """
annual archived automatic backup broken bulk busy canceled central critical cross daily default delayed
dependent detached disabled duplicated early emergency empty encrypted enterprise expired external failing
fresh frozen full global hidden hourly idle inbound internal invalid isolated large late legacy live local
manual marked merged migrated minor missing monthly nested new nightly offline old orphaned outbound paid
partial pending pinned premium primary private public quarterly queued recent regional remote renamed
replicated restored retired scheduled seasonal secondary shared slow small stale standby sticky suspended
temporary throttled trial unpaid unused urgent verbose weekly yearly
"""
_TEAMS = """
payments platform growth identity search data mobile infra billing support security checkout catalog
logistics finance marketing analytics devops sre frontend backend compliance partner onboarding
"""
_REGIONS = (
    "us-east-1 us-west-2 eu-west-1 eu-central-1 ap-southeast-2 ap-northeast-1 sa-east-1 ca-central-1 "
    "europe-west4 asia-south1"
).split()
_SERVICE_PREFIXES = """
orders ledger checkout catalog identity notifications search billing pricing inventory shipping
reporting accounts profiles recommendations reviews subscriptions payouts fraud analytics gateway
media exports imports scheduler auth webhooks partners loyalty coupons quotes
"""
_SERVICE_SUFFIXES = "api worker gateway service sync web scheduler proxy consumer cron backend".split()
_WHEN = (
    "Monday morning; last night; the weekend; yesterday afternoon; the last deploy; the holiday freeze; "
    "the database failover; the region migration; the quarter close; the traffic spike"
).split("; ")
_TRACKERS = "INC OPS SUP JIRA SEC REL".split()
_CONTEXTS = (
    "after the {code} release",
    "on {host}",
    "in {region}",
    "for customer {cust}",
    "reported by the {team} team",
    "since {when}",
    "during the {adj} {noun} window",
    "({tracker}-{n})",
    "while the {adj} {noun} job was running",
    "blocking the {code} {noun}",
    "{cust} says the {noun} is {adj}",
)
_OFF_TOPIC = (
    "write a haiku about autumn leaves drifting over a quiet pond",
    "plan a vegetarian picnic menu with lemonade and fruit tarts",
    "recommend hiking boots for muddy woodland trails",
    "explain why tides follow the phases of the moon",
    "suggest names for a golden retriever puppy",
    "convert grandma's sourdough bread recipe to grams",
    "choose paint colours for a child's bedroom mural",
    "summarise the plot of a classic detective novel",
    "compare violin and cello for an adult beginner",
    "identify birdsong heard at dawn near the lake",
    "tips for knitting a wool scarf with cables",
    "best way to repot an orchid after flowering",
)

_SYLLABLES = (
    "ka ri to mo na lu ve si dra qui zen bor tal mir fex gon pel vas nor kel bri sta fro glim "
    "hal jor lek mun pra ros tev ul yar zo ber cin dus fen gar hux ith jul kor lim "
    "nev ost pim quo rax sul tor ux vel wen xi yul zar"
).split()


def _pseudo_words(count: int, seed: int) -> list[str]:
    """Made-up proper names (codenames, customers): distinct, pronounceable, deterministic."""
    rng = random.Random(seed)
    found: dict[str, None] = {}
    while len(found) < count:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((2, 2, 3))))
        found.setdefault(word, None)
    return list(found)


class _Zipf:
    """Draws from a ranked list with weight 1 / rank^s: a few words are common, most are rare."""

    def __init__(self, words: Sequence[str], s: float = 1.05) -> None:
        self.words = list(words)
        self.cum = list(accumulate(1 / (rank**s) for rank in range(1, len(self.words) + 1)))

    def __call__(self, rng: random.Random) -> str:
        return rng.choices(self.words, cum_weights=self.cum)[0]


_CODENAMES = _Zipf(_pseudo_words(1800, 11))
_CUSTOMERS = _Zipf([w.capitalize() for w in _pseudo_words(3000, 23)])
_SERVICES = _Zipf([f"{p}-{s}" for p in _SERVICE_PREFIXES.split() for s in _SERVICE_SUFFIXES])
_NOUN = _Zipf(_NOUNS.split())
_ADJ = _Zipf(_ADJECTIVES.split())
_TEAM = _Zipf(_TEAMS.split())
_REGION = _Zipf(_REGIONS)
_OS = _Zipf(["linux", "macos", "windows"], s=2.0)
_RUNTIME = _Zipf(["python3.12", "node20", "go1.22", "java21", "ruby3.3", "dotnet8"])


def vocabulary() -> frozenset[str]:
    """Every free word the generator may draw (topic words come on top)."""
    words: set[str] = set()
    for source in (_CODENAMES, _CUSTOMERS, _NOUN, _ADJ, _TEAM, _REGION):
        words.update(w.lower() for w in source.words)
    for service in _SERVICES.words:
        words.update(service.split("-"))
    return frozenset(words)


# -- scopes ---------------------------------------------------------------------------------

_OPS = ("deploys", "ci", "kubernetes", "certificates", "dns", "networking", "terraform", "docker", "monitoring")
_SUPPORT = ("refunds", "payments", "invoices", "tickets", "accounts", "email", "shipping", "metering")
_DATA = ("pipelines", "backups", "databases", "search", "models", "privacy", "schedulers")
_SHOP = ("payments", "inventory", "frontend", "caches", "performance", "webhooks", "localization", "shipping")
_BACKEND = ("tokens", "ratelimits", "queues", "databases", "config", "secrets", "registries", "clocks")
_MOBILE = ("mobile", "uploads", "flags", "localization", "frontend", "scanning")
_INFRA = ("kubernetes", "networking", "ssh", "secrets", "terraform", "logging", "monitoring", "buckets")

#: (scope, weight, topics it is mostly about). The query scope sees the first two only.
SCOPES: tuple[tuple[Scope, int, tuple[str, ...]], ...] = (
    (Scope("acme", "platform", "ops", agent="ops-agent"), 16, _OPS),
    (Scope("acme", "platform", "ops"), 9, _OPS),
    (Scope("acme", "platform", "ops", agent="release-bot"), 5, _OPS),
    (Scope("acme", "support", "refunds"), 10, _SUPPORT),
    (Scope("acme", "support", "refunds", agent="refund-agent"), 6, _SUPPORT),
    (Scope("acme", "data", "warehouse"), 6, _DATA),
    (Scope("globex", "shop", "checkout"), 9, _SHOP),
    (Scope("globex", "shop", "checkout", team="payments"), 4, _SHOP),
    (Scope("globex", "infra", "clusters"), 8, _INFRA),
    (Scope("initech", "mobile", "apps"), 7, _MOBILE),
    (Scope("initech", "backend", "api"), 5, _BACKEND),
    (Scope("initech", "backend", "api", user="u-1042"), 3, _BACKEND),
    (Scope("umbrella", "lab", "pipelines"), 5, _DATA),
    (Scope("hooli", "growth", "email"), 4, ("email", "flags", "metering", "privacy", "uploads")),
    (Scope("hooli", "core", "identity"), 3, ("accounts", "tokens", "ssh", "secrets", "scanning")),
)
QUERY_SCOPE = SCOPES[0][0]
_SCOPE_CUM = list(accumulate(weight for _, weight, _ in SCOPES))


# -- cases ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    args: Mapping[str, Any]
    result: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Case:
    """One generated run and what became of it."""

    index: int
    run_id: str
    topic: str
    task: str
    scope: Scope
    env: Mapping[str, str]
    attempts: tuple[tuple[Call, ...], ...]
    check: str
    passed: bool
    status: Status
    supporting: int
    contradicting: int
    created_at: datetime
    expires_at: datetime | None


_SLOTS: dict[str, Callable[[random.Random], str]] = {
    "n": lambda rng: str(rng.randrange(100, 99_999)),
    "svc": _SERVICES,
    "host": lambda rng: f"{_SERVICES(rng)}-{rng.randrange(1, 40)}",
    "region": _REGION,
    "code": _CODENAMES,
    "cust": _CUSTOMERS,
    "ver": lambda rng: f"v{rng.randrange(1, 6)}.{rng.randrange(0, 30)}.{rng.randrange(0, 12)}",
    "team": _TEAM,
    "when": lambda rng: rng.choice(_WHEN),
    "adj": _ADJ,
    "noun": _NOUN,
    "tracker": lambda rng: rng.choice(_TRACKERS),
}
_SLOT = re.compile(r"\{(\w+)\}")


def _fill(template: str, rng: random.Random) -> str:
    """The template with each ``{slot}`` drawn afresh."""
    if "{" not in template:
        return template
    return _SLOT.sub(lambda match: _SLOTS[match.group(1)](rng), template)


def _task(topic: Topic, rng: random.Random) -> str:
    subject = _fill(rng.choice(topic.subjects), rng)
    parts = [_capitalized(subject), rng.choice(topic.problems)]
    parts += [_fill(context, rng) for context in rng.sample(_CONTEXTS, rng.choice((0, 1, 1, 2, 2, 3)))]
    return " ".join(parts)


def _capitalized(text: str) -> str:
    """First letter up, unless the word is already mixed case ("iOS", "mTLS")."""
    return text[0].upper() + text[1:] if text[:2].islower() else text


def _result(tool: str, rng: random.Random) -> Any:
    if rng.random() < 0.3:
        return {"status": "ok", "id": rng.randrange(1, 10**6), "took_ms": rng.randrange(5, 4000)}
    return rng.choice(("ok", "done", "issued", "healthy", "applied", "synced", f"{tool} completed"))


def case(index: int, seed: int = SEED) -> Case:
    """Case ``index`` of the corpus: the same for the same index and seed, whatever ``n`` is."""
    rng = random.Random(seed * 1_000_003 + index)
    scope, _, focus = SCOPES[rng.choices(range(len(SCOPES)), cum_weights=_SCOPE_CUM)[0]]
    topic = _TOPIC[rng.choice(focus)] if rng.random() < 0.8 else rng.choice(TOPICS)
    task = _task(topic, rng)
    env = {"os": _OS(rng), "region": _REGION(rng), "runtime": _RUNTIME(rng)}
    arg, bad, good = rng.choice(topic.fixes)
    base_args: dict[str, Any] = {"target": _SERVICES(rng)}
    if rng.random() < 0.5:
        base_args["ticket"] = f"{rng.choice(_TRACKERS)}-{rng.randrange(100, 9999)}"
    failures = rng.choice((0, 1, 1, 1, 2, 2, 3))
    attempts: list[tuple[Call, ...]] = []
    for _ in range(failures):
        calls = [Call(t, dict(base_args), _result(t, rng)) for t in rng.sample(topic.tools[1:], rng.choice((0, 1)))]
        calls.append(Call(topic.tools[0], {**base_args, arg: bad}, None, rng.choice(topic.errors)))
        attempts.append(tuple(calls))
    last = [Call(topic.tools[0], {**base_args, arg: good}, _result(topic.tools[0], rng))]
    last += [Call(t, dict(base_args), _result(t, rng)) for t in rng.sample(topic.tools[1:], rng.choice((0, 1, 2)))]
    attempts.append(tuple(last))
    roll = rng.random()
    passed = roll >= 0.08
    status, supporting, contradicting, expires = Status.VALIDATED, 1, 0, None
    created = BASE_TIME + timedelta(seconds=index * 240 + rng.randrange(240))
    if not passed:
        status, supporting, contradicting = Status.QUARANTINED, 0, 1
    elif roll < 0.11:
        status, contradicting = Status.REVOKED, rng.randrange(1, 4)
    elif roll < 0.15:
        status, supporting = Status.REINFORCED, rng.randrange(2, 7)
    elif roll < 0.16:
        expires = created + timedelta(days=7)
    return Case(
        index=index,
        run_id=f"run_bench_{seed}_{index}",
        topic=topic.key,
        task=task,
        scope=scope,
        env=env,
        attempts=tuple(attempts),
        check=topic.check,
        passed=passed,
        status=status,
        supporting=supporting,
        contradicting=contradicting,
        created_at=created,
        expires_at=expires,
    )


def cases(n: int, *, start: int = 0, seed: int = SEED) -> Iterator[Case]:
    """Cases ``start`` .. ``start + n - 1``."""
    for index in range(start, start + n):
        yield case(index, seed)


def experiences(start: int, n: int, seed: int = SEED) -> list[Experience]:
    """Cases ``start`` .. ``start + n - 1`` as Experiences (picklable work for a process pool)."""
    return [experience(item) for item in cases(n, start=start, seed=seed)]


# -- two ways to store a case ---------------------------------------------------------------


def record(mem: Memory, item: Case) -> Experience | None:
    """The real recorder path: ``mem.run`` → ``tool`` per call → ``check`` → ``finish``."""
    rec = mem.run(item.task, scope=item.scope, env=item.env, run_id=item.run_id)
    for number, attempt in enumerate(item.attempts):
        if number:
            rec.next_attempt()
        for call in attempt:
            rec.tool(call.tool, args=call.args, result=call.result, error=call.error)
    rec.check(item.check, passed=item.passed)
    return rec.finish()


@lru_cache(maxsize=4096)
def error_class(text: str) -> str:
    """``afteraction.error_class``, cached: the corpus repeats a few hundred error texts."""
    return _error_class(text)


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:59] + "…"


def _describe(call: Call) -> str:
    head = f"{call.tool}({', '.join(f'{k}={_value(v)}' for k, v in call.args.items())})"
    if call.error is not None:
        return f"{head} failed: {error_class(call.error)}"
    return head if call.result is None else f"{head} → {_value(call.result)}"


def experience(item: Case) -> Experience:
    """The case as an Experience in the shape ``distill`` gives (for bulk loading)."""
    n = len(item.attempts)
    failed = [(i, a) for i, a in enumerate(item.attempts) if any(c.error for c in a)]
    parts = [f"{'Verified' if item.passed else 'Failed verification'} after {n} attempt{'s' if n > 1 else ''}."]
    if failed:
        listed = "; ".join(
            f"attempt {i} — {', '.join(dict.fromkeys(error_class(c.error) for c in a if c.error))}" for i, a in failed
        )
        parts.append(f"Failed: {listed}.")
    parts.append(
        f"Worked: attempt {n - 1}. Checks: [{item.check}]." if item.passed else f"Checks failed: [{item.check}]."
    )
    failures = [_describe(c) for a in item.attempts for c in a if c.error]
    worked = [_describe(c) for c in item.attempts[-1] if not c.error] if item.passed else []
    summary = " ".join(
        ([f"What failed: {'; '.join(failures)}."] if failures else [])
        + ([f"What worked: {'; '.join(worked)}."] if worked else [])
    )
    errors = [c.error for a in item.attempts for c in a if c.error]
    tried = tuple(Tried(i, c.tool, error_class(c.error), dict(c.args)) for i, a in failed for c in a if c.error)
    return make_experience(
        item.task,
        " ".join(parts),
        scope=item.scope,
        id=f"exp_bench_{item.index:08d}",
        task_id=item.run_id,
        status=item.status,
        confidence=(1 + item.supporting) / (2 + item.supporting + item.contradicting),
        created_at=item.created_at,
        summary=summary,
        scenario=Scenario(
            task=item.task,
            environment=dict(item.env),
            symptoms=tuple(dict.fromkeys(e[:200] for e in errors)),
            failure_signature=" | ".join(dict.fromkeys(error_class(e) for e in errors)),
        ),
        solution=Solution(tried=tried, worked=f"attempt {n - 1}" if item.passed else "", steps=tuple(worked)),
        checks=(item.check,),
        supporting=item.supporting,
        contradicting=item.contradicting,
        expires_at=item.expires_at,
    )


# -- queries --------------------------------------------------------------------------------


def queries(n: int, *, seed: int = SEED, off_topic: float = 0.15) -> list[str]:
    """Task texts for the next run, seen from ``QUERY_SCOPE``: mostly its own topics' problems
    reworded (the ``asks``, not the stored wording), some other topics, and a share that
    matches nothing stored."""
    rng = random.Random(seed + 7)
    focus = SCOPES[0][2]
    out = []
    for _ in range(n):
        roll = rng.random()
        if roll < off_topic:
            out.append(rng.choice(_OFF_TOPIC))
            continue
        topic = _TOPIC[rng.choice(focus)] if roll < 0.8 else rng.choice(TOPICS)
        text = rng.choice(topic.asks)
        if rng.random() < 0.5:
            text += " " + _fill(rng.choice(("for {svc}", "in {region}", "after the {code} release", "on {host}")), rng)
        out.append(_capitalized(text))
    return out
