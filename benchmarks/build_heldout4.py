"""Build ``quality_heldout4.json``: a fourth, fresh held-out corpus of the retrieval-quality benchmark.

The earlier held-out corpora have been used to decide changes and are no longer untouched, so this one
was written apart from all of them, about another kind of company (a consumer mobile and web product:
iOS and Android release builds, app store review, push notifications, a CDN, payments and refunds,
feature flags, sign-in, transactional email, and its CI and deploys; tenant ``tidewater``, another tenant
``saltmarsh``). Same format and rules (``benchmarks/README.md``), made the same way: ``build_heldout.py``'s
machinery records every lesson through the real recorder path (``mem.run`` → ``tool`` per call →
``check`` → ``finish``, in an in-memory store with a fixed clock, tool arguments allow-listed; extra
evidence through ``mem.record_outcome``), exports it and gives it a readable id (``exp_<name>``). The
queries were written by hand as users would ask; none was tried against the retrieval code before it
was kept.

    .venv/bin/python benchmarks/build_heldout4.py            # rewrites benchmarks/quality_heldout4.json
    .venv/bin/python benchmarks/build_heldout4.py --check    # exits 1 when the file is not what this builds
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import afteraction as aa

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_heldout import Ask, L, Q, Spec, build, main

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "quality_heldout4.json"
VERSION = 1
NOW = datetime(2026, 7, 1, 12, 0, tzinfo=timezone.utc)
ABOUT = (
    "The fourth held-out corpus of benchmarks/bench_quality.py, never used to tune retrieval: lessons as "
    "`afteraction export` writes them, and labelled queries. Built by benchmarks/build_heldout4.py; see "
    "benchmarks/README.md."
)
TOOL = "build_heldout4"

# -- scopes -----------------------------------------------------------------------------------

#: Where lessons live.
PLATFORM = aa.Scope(tenant="tidewater", app="engineering", project="platform")
SHIPBOT = aa.Scope(tenant="tidewater", app="engineering", project="platform", agent="ship-bot")
PAYMENTS = aa.Scope(tenant="tidewater", app="commerce", project="payments")
CARE = aa.Scope(tenant="tidewater", app="support", project="care")
SALTMARSH = aa.Scope(tenant="saltmarsh", app="engineering", project="platform")

#: Who asks.
ASK_PLATFORM = aa.Scope(tenant="tidewater", app="engineering", project="platform", agent="platform-agent")
ASK_PAY = aa.Scope(tenant="tidewater", app="commerce", project="payments", agent="payments-agent")
ASK_CARE = aa.Scope(tenant="tidewater", app="support", project="care", agent="care-agent")
ASK_SALT = aa.Scope(tenant="saltmarsh", app="engineering", project="platform", agent="platform-agent")

IOS = {"platform": "ios"}
ANDROID = {"platform": "android"}
WEB = {"platform": "web"}

# -- lessons ----------------------------------------------------------------------------------

LESSONS: list[Spec] = [
    # iOS release builds
    L(
        "ios_distribution_cert_expired",
        PLATFORM,
        "03-02 09:15",
        "iOS release archive fails at code signing because the Apple distribution certificate has expired",
        [("run_lane", {"lane": "ios release"}, "error: No signing certificate 'iOS Distribution' found for team TW42")],
        [
            (
                "renew_signing_identity",
                {"kind": "distribution", "store": "match-certs"},
                "new certificate valid to 2027-03",
            ),
            ("run_lane", {"lane": "ios release"}, "archive signed and exported: Tidewater.ipa"),
        ],
        "ipa-signed",
        env=IOS,
    ),
    L(
        "ios_profile_push_entitlement",
        PLATFORM,
        "03-03 14:40",
        "iOS archive is rejected because the provisioning profile lacks the push notification entitlement",
        [
            (
                "run_lane",
                {"lane": "ios release"},
                "Provisioning profile 'match AppStore com.tidewater.app' doesn't include the aps-environment "
                "entitlement",
            )
        ],
        [
            ("regenerate_profile", {"bundle": "com.tidewater.app", "capability": "push"}, "profile regenerated"),
            ("run_lane", {"lane": "ios release"}, "archive signed with aps-environment=production"),
        ],
        "ipa-signed",
        env=IOS,
    ),
    L(
        "ios_xcode_image_upgrade",
        PLATFORM,
        "03-05 08:05",
        "iOS build on CI breaks with Swift compiler errors after the runner image moved to a newer Xcode",
        [
            (
                "run_pipeline",
                {"pipeline": "harbor-ios"},
                "error: 'sendable' conformance of 'WaveCache' cannot be used in this context (Xcode 17.1)",
            )
        ],
        [
            ("set_ci_variable", {"name": "DEVELOPER_DIR", "value": "/Applications/Xcode_16.4.app"}, "variable set"),
            ("run_pipeline", {"pipeline": "harbor-ios"}, "build succeeded on Xcode 16.4"),
        ],
        "pipeline-green",
        env=IOS,
    ),
    L(
        "ios_pod_install_trunk_timeout",
        PLATFORM,
        "03-06 11:20",
        "pod install on CI hangs and times out while fetching specs from the CocoaPods trunk CDN",
        [
            (
                "run_step",
                {"step": "pod install"},
                "CDN: trunk URL couldn't be downloaded: Operation timed out after 60 s",
            )
        ],
        [
            ("restore_cache", {"path": "Pods", "key": "pods-podfile-lock"}, "cache restored: 212 pods"),
            ("run_step", {"step": "pod install --deployment"}, "Pod installation complete, 0 downloads"),
        ],
        "pipeline-green",
        env=IOS,
    ),
    L(
        "ios_build_number_reused",
        PLATFORM,
        "03-09 16:45",
        "Upload to App Store Connect is refused because the bundle version was already used by an earlier build",
        [
            (
                "upload_build",
                {"store": "app-store-connect", "version": "4.18.0"},
                "ITMS-90062: The value for key CFBundleVersion [418] must be higher than the previously uploaded",
            )
        ],
        [
            ("set_build_setting", {"name": "CFBundleVersion", "value": "$CI_PIPELINE_IID"}, "CFBundleVersion=30877"),
            ("upload_build", {"store": "app-store-connect", "version": "4.18.0"}, "upload accepted, processing"),
        ],
        "build-uploaded",
        env=IOS,
    ),
    L(
        "ios_dsym_not_uploaded",
        PLATFORM,
        "03-10 10:30",
        "Crash reports from the App Store build show raw addresses because debug symbols were never sent",
        [("open_crash", {"issue": "CR-5512"}, "Missing dSYM: 1 required dSYM for Tidewater 4.18.0 (30877)")],
        [
            ("set_build_setting", {"name": "DEBUG_INFORMATION_FORMAT", "value": "dwarf-with-dsym"}, "setting changed"),
            ("upload_symbols", {"version": "4.18.0", "build": "30877"}, "3 dSYM files uploaded"),
        ],
        "crashes-symbolicated",
        env=IOS,
    ),
    L(
        "ios_testflight_processing_stuck",
        PLATFORM,
        "03-12 13:00",
        "A TestFlight build has sat in Processing for six hours and never becomes available to testers",
        [("check_build_status", {"build": "30901"}, "state PROCESSING since 06:58 UTC")],
        [
            ("upload_build", {"store": "app-store-connect", "version": "4.18.1"}, "build 30902 uploaded"),
            ("check_build_status", {"build": "30902"}, "state VALID, available in TestFlight after 14 minutes"),
        ],
        "testflight-available",
        env=IOS,
    ),
    # Android release builds
    L(
        "android_keystore_password_rotated",
        PLATFORM,
        "03-13 09:40",
        "Android release bundle fails to sign on CI after the upload keystore credentials were rotated",
        [
            (
                "run_pipeline",
                {"pipeline": "harbor-android"},
                "Failed to read key upload from store: Keystore was tampered with, or password was incorrect",
            )
        ],
        [
            ("set_ci_variable", {"name": "UPLOAD_STORE_PASSWORD", "value": "from-vault:android/upload"}, "updated"),
            ("run_pipeline", {"pipeline": "harbor-android"}, "app-release.aab signed"),
        ],
        "aab-signed",
        env=ANDROID,
    ),
    L(
        "android_r8_stripped_model",
        PLATFORM,
        "03-16 15:10",
        "Android release build crashes on launch because the code shrinker removed classes used through reflection",
        [
            (
                "run_smoke_test",
                {"variant": "release"},
                "java.lang.ClassNotFoundException: com.tidewater.feed.model.TideCard at JsonAdapter.fromJson",
            )
        ],
        [
            (
                "add_keep_rule",
                {"file": "proguard-rules.pro", "rule": "-keep class com.tidewater.**.model.** { *; }"},
                "ok",
            ),
            ("run_smoke_test", {"variant": "release"}, "launch ok, feed rendered"),
        ],
        "release-smoke-green",
        env=ANDROID,
    ),
    L(
        "android_target_sdk_too_low",
        PLATFORM,
        "03-17 10:00",
        "Google Play Console refuses the update because the app targets an API level below the current minimum",
        [
            (
                "upload_build",
                {"store": "google-play", "version": "4.18.0"},
                "Your app currently targets API level 33 and must target at least API level 35",
            )
        ],
        [
            ("set_gradle_property", {"name": "targetSdk", "value": "35"}, "targetSdk=35"),
            ("run_pipeline", {"pipeline": "harbor-android"}, "green, 812 tests"),
            ("upload_build", {"store": "google-play", "version": "4.18.0"}, "bundle accepted to internal track"),
        ],
        "build-uploaded",
        env=ANDROID,
    ),
    L(
        "android_version_code_used",
        PLATFORM,
        "03-18 17:25",
        "Play upload fails with version code already used after a release branch was rebuilt",
        [("upload_build", {"store": "google-play", "version": "4.18.1"}, "Version code 41801 has already been used.")],
        [
            ("set_gradle_property", {"name": "versionCode", "value": "$CI_PIPELINE_IID"}, "versionCode=30911"),
            ("upload_build", {"store": "google-play", "version": "4.18.1"}, "bundle accepted to internal track"),
        ],
        "build-uploaded",
        env=ANDROID,
    ),
    L(
        "android_gradle_cache_corrupt",
        PLATFORM,
        "03-20 08:50",
        "Android CI jobs fail early reading a corrupted Gradle build cache restored from the previous run",
        [
            (
                "run_pipeline",
                {"pipeline": "harbor-android"},
                "Could not read workspace metadata from /home/ci/.gradle/caches/transforms-4/metadata.bin",
            )
        ],
        [
            ("bump_cache_key", {"cache": "gradle", "suffix": "v7"}, "new cache key gradle-v7"),
            ("run_pipeline", {"pipeline": "harbor-android"}, "green, cache saved fresh"),
        ],
        "pipeline-green",
        env=ANDROID,
    ),
    L(
        "android_emulator_ui_tests_flaky",
        PLATFORM,
        "03-23 12:35",
        "Instrumented UI tests on the Android emulator fail at random with view-not-found timeouts",
        [
            (
                "run_instrumented_tests",
                {"device": "pixel-7-api-34"},
                "NoMatchingViewException: No views in hierarchy found matching: with id: btn_checkout (7 of 140 "
                "failed)",
            )
        ],
        [
            ("set_emulator_setting", {"name": "animator_duration_scale", "value": "0"}, "animations off"),
            ("run_instrumented_tests", {"device": "pixel-7-api-34"}, "140 passed, 5 reruns all green"),
        ],
        "ui-tests-green",
        env=ANDROID,
        supporting=3,
    ),
    # app store review
    L(
        "review_demo_account_locked",
        PLATFORM,
        "03-24 09:00",
        "App Review rejected the submission because the reviewer could not log in with the demo account",
        [
            (
                "read_review_feedback",
                {"submission": "4.18.0"},
                "Guideline 2.1 - Information Needed: we were unable to sign in with the provided demo credentials",
            )
        ],
        [
            ("reset_demo_account", {"account": "appreview@tidewater.app"}, "account unlocked, two-step sign-in off"),
            ("resubmit_for_review", {"submission": "4.18.0", "notes": "demo account reset"}, "Waiting for Review"),
        ],
        "review-approved",
        env=IOS,
    ),
    L(
        "review_restore_purchases_missing",
        PLATFORM,
        "03-26 15:30",
        "Apple rejected the update for having no way to restore previously bought subscriptions",
        [
            (
                "read_review_feedback",
                {"submission": "4.19.0"},
                "Guideline 3.1.1 - the app does not include a Restore mechanism for previously purchased In-App "
                "Purchases",
            )
        ],
        [
            ("set_flag", {"flag": "paywall-restore-button", "value": "on"}, "flag on for all iOS users"),
            ("resubmit_for_review", {"submission": "4.19.0", "notes": "Restore button on the paywall"}, "In Review"),
        ],
        "review-approved",
        env=IOS,
    ),
    L(
        "review_privacy_manifest_reasons",
        PLATFORM,
        "03-27 11:10",
        "App Store Connect emails a missing API declaration warning after upload and the build cannot be submitted",
        [
            (
                "upload_build",
                {"store": "app-store-connect", "version": "4.19.0"},
                "ITMS-91053: Missing API declaration - NSPrivacyAccessedAPICategoryUserDefaults",
            )
        ],
        [
            (
                "add_privacy_reason",
                {"file": "PrivacyInfo.xcprivacy", "category": "UserDefaults"},
                "reason CA92.1 added",
            ),
            ("upload_build", {"store": "app-store-connect", "version": "4.19.0"}, "no issues reported"),
        ],
        "build-uploaded",
        env=IOS,
    ),
    L(
        "play_data_safety_mismatch",
        PLATFORM,
        "03-30 14:15",
        "Google Play rejected the update because the data safety form does not declare location collected by an SDK",
        [
            (
                "read_review_feedback",
                {"submission": "android-4.19.0"},
                "Policy: User Data - your Data safety form does not accurately reflect approximate location collection",
            )
        ],
        [
            ("update_store_listing", {"form": "data-safety", "add": "approximate location"}, "form saved"),
            ("resubmit_for_review", {"submission": "android-4.19.0", "notes": "form updated"}, "In review"),
        ],
        "review-approved",
        env=ANDROID,
    ),
    # push notifications
    L(
        "push_apns_provider_token_stale",
        PLATFORM,
        "04-01 07:45",
        "iOS push notifications stop delivering after an hour and APNs answers ExpiredProviderToken",
        [("send_test_push", {"platform": "ios", "service": "ripple"}, "APNs 403 ExpiredProviderToken")],
        [
            ("set_config", {"service": "ripple", "key": "apns_jwt_refresh_minutes", "value": "50"}, "config applied"),
            ("send_test_push", {"platform": "ios", "service": "ripple"}, "APNs 200, delivered"),
        ],
        "push-delivered",
        env=IOS,
    ),
    L(
        "push_fcm_legacy_endpoint_removed",
        PLATFORM,
        "04-02 10:20",
        "Android notifications all fail because the sender still posts to the retired FCM legacy endpoint",
        [
            (
                "send_test_push",
                {"platform": "android", "service": "ripple"},
                "HTTP 404 from https://fcm.googleapis.com/fcm/send",
            )
        ],
        [
            ("deploy_service", {"service": "ripple", "version": "2.7.0 (FCM HTTP v1)"}, "rolled out"),
            ("send_test_push", {"platform": "android", "service": "ripple"}, "projects/tidewater/messages/0:17 ok"),
        ],
        "push-delivered",
        env=ANDROID,
    ),
    L(
        "push_sandbox_device_tokens",
        PLATFORM,
        "04-03 16:00",
        "Notifications to internal beta builds fail with BadDeviceToken while store users get them fine",
        [("send_test_push", {"platform": "ios", "service": "ripple"}, "APNs 400 BadDeviceToken for 212 tokens")],
        [
            ("set_config", {"service": "ripple", "key": "route_by_aps_environment", "value": "true"}, "applied"),
            (
                "send_test_push",
                {"platform": "ios", "service": "ripple"},
                "development tokens sent to sandbox, delivered",
            ),
        ],
        "push-delivered",
        env=IOS,
    ),
    L(
        "push_duplicate_on_redelivery",
        PLATFORM,
        "04-06 12:30",
        "Users get the same notification two or three times when the push worker retries a message",
        [
            (
                "inspect_queue",
                {"queue": "ripple-outbound"},
                "message 88f1 delivered 3 times: visibility timeout 30 s shorter than send batch",
            )
        ],
        [
            ("set_config", {"service": "ripple", "key": "collapse_id", "value": "notification_id"}, "applied"),
            ("set_config", {"service": "ripple", "key": "visibility_timeout_s", "value": "120"}, "applied"),
        ],
        "no-duplicate-pushes",
    ),
    L(
        "push_campaign_quota_429",
        PLATFORM,
        "04-08 18:05",
        "A marketing broadcast to all Android users is throttled by FCM and most sends fail with quota exceeded",
        [
            (
                "start_campaign",
                {"campaign": "summer-sale", "audience": "all-android"},
                "FCM 429 QUOTA_EXCEEDED for 61% of 1.2M sends",
            )
        ],
        [
            ("set_config", {"service": "ripple", "key": "fcm_sends_per_second", "value": "2000"}, "rate limiter on"),
            ("start_campaign", {"campaign": "summer-sale", "audience": "all-android"}, "1.2M sent over 10 minutes"),
        ],
        "campaign-sent",
        env=ANDROID,
    ),
    # CDN and web delivery
    L(
        "cdn_html_cached_old_bundle",
        PLATFORM,
        "04-09 09:10",
        "After a web deploy visitors still load the previous JavaScript bundle because the edge caches index.html",
        [("purge_cdn", {"paths": "/static/*"}, "purged, but index.html still references main.4f2a.js")],
        [
            ("set_edge_rule", {"path": "/index.html", "cache_control": "no-cache"}, "rule live on shoreline-cdn"),
            ("purge_cdn", {"paths": "/index.html"}, "purged; main.9c1e.js served"),
        ],
        "web-version-current",
        env=WEB,
    ),
    L(
        "cdn_fonts_cors_blocked",
        PLATFORM,
        "04-10 13:45",
        "Web fonts fail to load from the asset domain and the browser console shows a CORS error",
        [
            (
                "check_url",
                {"url": "https://assets.tidewater.app/fonts/Brine.woff2"},
                "No 'Access-Control-Allow-Origin' header is present on the requested resource",
            )
        ],
        [
            (
                "set_edge_rule",
                {"path": "/fonts/*", "header": "Access-Control-Allow-Origin: https://tidewater.app"},
                "ok",
            ),
            ("check_url", {"url": "https://assets.tidewater.app/fonts/Brine.woff2"}, "200 with CORS header"),
        ],
        "fonts-load",
        env=WEB,
    ),
    L(
        "cdn_origin_cert_hostname",
        PLATFORM,
        "04-13 07:30",
        "The CDN answers 526 for the whole site after the origin certificate was renewed",
        [("check_url", {"url": "https://tidewater.app/"}, "HTTP 526 Invalid SSL certificate")],
        [
            ("issue_certificate", {"host": "origin.tidewater.app", "san": "tidewater.app"}, "certificate issued"),
            ("check_url", {"url": "https://tidewater.app/"}, "HTTP 200"),
        ],
        "site-up",
        env=WEB,
    ),
    L(
        "cdn_purge_api_rate_limit",
        PLATFORM,
        "04-14 15:55",
        "The deploy job's cache purge step fails because the CDN API limits how many purge calls we make",
        [("purge_cdn", {"paths": "per-file (3,140 files)"}, "HTTP 429 Too Many Requests: purge limit 1000/5 min")],
        [
            ("tag_responses", {"header": "Surrogate-Key", "value": "release-4.19"}, "tags on all assets"),
            ("purge_cdn", {"tag": "release-4.19"}, "1 purge call, done in 2 s"),
        ],
        "deploy-green",
        env=WEB,
    ),
    L(
        "cdn_image_resize_504",
        PLATFORM,
        "04-15 11:40",
        "Profile photos from phones come back 504 from the edge image resizer when the original is very large",
        [
            (
                "check_url",
                {"url": "https://img.tidewater.app/u/913/avatar.jpg?w=256"},
                "HTTP 504 Gateway Timeout from pebble-img after 30 s (source 24 MB HEIC)",
            )
        ],
        [
            ("set_config", {"service": "pebble-img", "key": "max_source_mb", "value": "8"}, "applied"),
            ("run_backfill", {"job": "downscale-originals"}, "9,412 originals downscaled"),
        ],
        "avatars-load",
    ),
    L(
        "web_service_worker_stale_shell",
        PLATFORM,
        "04-16 10:05",
        "Returning visitors keep seeing an old version of the web app for days because the service worker serves a "
        "cached shell",
        [("purge_cdn", {"paths": "/*"}, "purged; returning browsers still show version 4.17")],
        [
            ("deploy_service", {"service": "tidewater-web", "version": "sw skipWaiting + clientsClaim"}, "deployed"),
            ("check_url", {"url": "https://tidewater.app/version"}, "4.19.2 after one reload"),
        ],
        "web-version-current",
        env=WEB,
    ),
    # feature flags
    L(
        "flags_mobile_cache_ttl",
        PLATFORM,
        "04-17 09:35",
        "Turning a feature flag off takes hours to reach the mobile apps because the SDK keeps flags in a long-lived "
        "cache",
        [("set_flag", {"flag": "new-checkout", "value": "off"}, "flag off; 38% of app sessions still on after 2 h")],
        [
            ("set_config", {"service": "lighthouse-sdk", "key": "poll_interval_s", "value": "60"}, "release 4.19.3"),
            ("set_flag", {"flag": "new-checkout", "value": "off"}, "99% of sessions off within 3 minutes"),
        ],
        "flag-propagated",
    ),
    L(
        "flags_rule_order_everyone",
        PLATFORM,
        "04-20 14:20",
        "A 10 percent rollout went to every user because a broader targeting rule sat above the percentage rule",
        [
            (
                "inspect_flag",
                {"flag": "tide-alerts-v2"},
                "rule 1 'country in [any]' matched 100% of evaluations; rule 2 (10%) never reached",
            )
        ],
        [
            ("reorder_rules", {"flag": "tide-alerts-v2", "order": "percentage first"}, "saved"),
            ("inspect_flag", {"flag": "tide-alerts-v2"}, "10.1% of evaluations true"),
        ],
        "rollout-at-target",
    ),
    L(
        "flags_default_on_when_unreachable",
        PLATFORM,
        "04-21 08:15",
        "Web servers served an unfinished feature to everyone while the flag service was unreachable at startup",
        [("read_logs", {"service": "tidewater-web"}, "lighthouse init timed out after 5000 ms; using default true")],
        [
            ("set_flag_default", {"flag": "beta-tidepools", "value": "false"}, "code default false"),
            ("deploy_service", {"service": "tidewater-web", "version": "4.19.4"}, "deployed"),
        ],
        "feature-hidden",
        env=WEB,
    ),
    L(
        "flags_staging_uses_prod_key",
        PLATFORM,
        "04-22 16:50",
        "The staging build of the app reads production flag values because its client key is the production one",
        [
            (
                "inspect_build_config",
                {"flavor": "staging"},
                "LIGHTHOUSE_CLIENT_ID=prod-7f3c in staging flavor (expected stg-)",
            )
        ],
        [
            ("set_build_setting", {"name": "LIGHTHOUSE_CLIENT_ID", "value": "per-flavor"}, "staging uses stg-21aa"),
            ("run_lane", {"lane": "android staging"}, "staging app shows staging flags"),
        ],
        "flags-isolated",
    ),
    L(
        "flags_bucketing_resets_on_logout",
        PLATFORM,
        "04-23 11:25",
        "Users flip between experiment variants from one session to the next because bucketing used an id reset on "
        "logout",
        [
            (
                "inspect_experiment",
                {"experiment": "onboarding-carousel"},
                "14% of accounts saw both variants; bucketing key install_id regenerated on sign-out",
            )
        ],
        [
            ("set_config", {"service": "lighthouse-sdk", "key": "bucket_by", "value": "account_id"}, "applied"),
            ("inspect_experiment", {"experiment": "onboarding-carousel"}, "0.1% saw both variants"),
        ],
        "experiment-stable",
    ),
    # sign-in
    L(
        "signin_apple_client_secret_expired",
        PLATFORM,
        "04-24 06:55",
        "Sign in with Apple fails for everyone with invalid_client because the generated client secret expired",
        [
            (
                "try_sign_in",
                {"provider": "apple", "service": "keelson"},
                "POST https://appleid.apple.com/auth/token -> 400 invalid_client",
            )
        ],
        [
            ("rotate_provider_secret", {"provider": "apple", "validity_days": "180"}, "new JWT client secret stored"),
            ("try_sign_in", {"provider": "apple", "service": "keelson"}, "200, session created"),
        ],
        "sign-in-works",
    ),
    L(
        "signin_google_play_signing_sha1",
        PLATFORM,
        "04-27 10:40",
        "Google sign-in works in debug builds but fails in the Play Store build with DEVELOPER_ERROR",
        [
            (
                "try_sign_in",
                {"provider": "google", "variant": "play-release"},
                "ApiException: 10 (DEVELOPER_ERROR)",
            )
        ],
        [
            (
                "register_fingerprint",
                {"console": "google-cloud", "cert": "Play app signing SHA-1"},
                "fingerprint added",
            ),
            ("try_sign_in", {"provider": "google", "variant": "play-release"}, "signed in"),
        ],
        "sign-in-works",
        env=ANDROID,
    ),
    L(
        "signin_refresh_token_race",
        PLATFORM,
        "04-28 13:15",
        "App users get logged out at random because two requests refresh the session at once and trip reuse detection",
        [
            (
                "read_logs",
                {"service": "keelson"},
                "refresh_token_reuse_detected: family revoked (2 refreshes within 40 ms)",
            )
        ],
        [
            ("release_app_fix", {"change": "single-flight token refresh", "version": "4.20.0"}, "released"),
            ("read_metrics", {"metric": "forced_logouts_per_day"}, "from 3,900 to 40"),
        ],
        "logouts-normal",
        supporting=3,
    ),
    L(
        "signin_magic_link_prefetched",
        PLATFORM,
        "04-29 09:05",
        "Email login links say already used when customers click them because corporate mail scanners open them first",
        [
            (
                "read_logs",
                {"service": "keelson"},
                "magic link consumed by GET from 40.94.x.x (Safe Links) 3 s after sending",
            )
        ],
        [
            ("deploy_service", {"service": "keelson", "version": "confirm page, consume on POST"}, "deployed"),
            ("try_sign_in", {"provider": "email-link", "service": "keelson"}, "link consumed only on button press"),
        ],
        "sign-in-works",
    ),
    L(
        "signin_jwks_cached_after_rotation",
        PLATFORM,
        "04-30 07:10",
        "The API rejects freshly issued sessions with kid not found after the auth service rotated its signing keys",
        [
            (
                "call_api",
                {"path": "/v2/me", "service": "jetty-api"},
                "401: no key in JWKS for kid 2026-04-a (JWKS cached 24 h)",
            )
        ],
        [
            ("set_config", {"service": "jetty-api", "key": "jwks_refetch_on_unknown_kid", "value": "true"}, "applied"),
            ("call_api", {"path": "/v2/me", "service": "jetty-api"}, "200"),
        ],
        "api-accepts-sessions",
    ),
    L(
        "signin_universal_links_aasa",
        PLATFORM,
        "05-01 15:00",
        "Password reset links open in Safari instead of the app because the association file is served through a "
        "redirect",
        [
            (
                "check_url",
                {"url": "https://tidewater.app/.well-known/apple-app-site-association"},
                "301 to https://www.tidewater.app/... (Apple does not follow redirects)",
            )
        ],
        [
            ("set_edge_rule", {"path": "/.well-known/*", "redirect": "none"}, "served directly as application/json"),
            ("open_link", {"link": "password-reset", "device": "iphone-15"}, "opened in the Tidewater app"),
        ],
        "links-open-app",
        env=IOS,
    ),
    L(
        "signin_sms_codes_late",
        PLATFORM,
        "05-04 12:00",
        "One-time login codes by SMS arrive minutes late or never for customers in a few countries",
        [
            (
                "read_metrics",
                {"metric": "sms_otp_delivery_p95", "country": "ID,PH,NG"},
                "p95 312 s, 18% undelivered via route A",
            )
        ],
        [
            (
                "set_config",
                {"service": "keelson", "key": "sms_route_ID_PH_NG", "value": "route-b + voice fallback"},
                "ok",
            ),
            ("read_metrics", {"metric": "sms_otp_delivery_p95", "country": "ID,PH,NG"}, "p95 9 s, 1% undelivered"),
        ],
        "codes-delivered",
    ),
    # transactional email
    L(
        "email_spf_missing_new_provider",
        PLATFORM,
        "05-05 08:30",
        "Receipts and reset emails land in spam since the switch to a new email sending provider",
        [
            (
                "check_headers",
                {"message": "receipt to gmail"},
                "Received-SPF: softfail (domain of tidewater.app does not designate 168.245.9.10 as permitted sender)",
            )
        ],
        [
            ("update_dns", {"record": "TXT tidewater.app", "value": "v=spf1 include:sendgrid.net ~all"}, "published"),
            ("check_headers", {"message": "receipt to gmail"}, "spf=pass, inbox"),
        ],
        "mail-in-inbox",
    ),
    L(
        "email_dkim_record_split",
        PLATFORM,
        "05-06 14:10",
        "DKIM signatures fail after rotating to a 2048-bit key because the DNS record was cut off",
        [
            (
                "check_headers",
                {"message": "welcome to outlook"},
                "dkim=fail (no key for signature) header.s=dm2026",
            )
        ],
        [
            ("update_dns", {"record": "TXT dm2026._domainkey", "value": "two quoted 255-char strings"}, "published"),
            ("check_headers", {"message": "welcome to outlook"}, "dkim=pass header.s=dm2026"),
        ],
        "mail-in-inbox",
    ),
    L(
        "email_reset_suppressed_address",
        PLATFORM,
        "05-07 10:45",
        "A user never gets password reset emails because their address is on the provider's suppression list",
        [
            (
                "lookup_message",
                {"to": "m***@kelpmail.com", "service": "driftmail"},
                "dropped: address on bounce suppression list since 2026-01-12",
            )
        ],
        [
            ("remove_suppression", {"to": "m***@kelpmail.com", "list": "bounces"}, "removed"),
            ("send_email", {"template": "password-reset", "service": "driftmail"}, "delivered 250 OK"),
        ],
        "mail-delivered",
    ),
    L(
        "email_template_locale_missing_var",
        PLATFORM,
        "05-08 16:20",
        "Order confirmation emails in Portuguese go out with an empty greeting and a raw placeholder",
        [
            (
                "render_template",
                {"template": "order-confirmed", "locale": "pt-BR"},
                "rendered 'Olá {{first_name}},' - variable first_name missing in pt-BR translation",
            )
        ],
        [
            ("fix_translation", {"template": "order-confirmed", "locale": "pt-BR"}, "placeholder name corrected"),
            ("render_template", {"template": "order-confirmed", "locale": "pt-BR"}, "'Olá Ana,'"),
        ],
        "template-renders",
    ),
    L(
        "email_queue_backlog_throttle",
        PLATFORM,
        "05-11 09:20",
        "Welcome emails reach new users over an hour late because the mail worker queue backs up",
        [
            (
                "inspect_queue",
                {"queue": "driftmail-send"},
                "backlog 184,000; provider 429 above 100 messages/s, workers retry in a tight loop",
            )
        ],
        [
            ("set_config", {"service": "driftmail", "key": "batch_send", "value": "1000 per call"}, "applied"),
            ("inspect_queue", {"queue": "driftmail-send"}, "backlog drained in 6 minutes"),
        ],
        "mail-on-time",
    ),
    # CI
    L(
        "ci_snapshot_fonts_differ",
        PLATFORM,
        "05-12 11:00",
        "Web screenshot comparison tests fail on some CI machines but not others because text renders differently",
        [
            (
                "run_job",
                {"job": "web-visual"},
                "3 snapshots differ by 0.8%: anti-aliasing of glyphs on runner ubuntu-24 vs ubuntu-22",
            )
        ],
        [
            ("pin_image", {"job": "web-visual", "image": "tidewater/playwright-fonts:1.4"}, "pinned"),
            ("run_job", {"job": "web-visual"}, "412 snapshots match"),
        ],
        "pipeline-green",
        env=WEB,
    ),
    L(
        "ci_mac_runner_queue",
        PLATFORM,
        "05-13 08:10",
        "iOS pipelines wait more than an hour to start because every hosted macOS machine is busy",
        [("inspect_pipeline", {"pipeline": "harbor-ios"}, "queued 71 minutes: concurrency limit 2 of 2 macOS runners")],
        [
            ("register_runners", {"label": "macos-arm64", "hosts": "4 mac minis"}, "4 runners online"),
            ("inspect_pipeline", {"pipeline": "harbor-ios"}, "started after 40 s"),
        ],
        "pipeline-wait-ok",
        env=IOS,
    ),
    L(
        "ci_node_modules_cache_key",
        PLATFORM,
        "05-14 13:30",
        "CI keeps installing yesterday's dependencies because the cache is keyed on package.json instead of the "
        "lockfile",
        [
            (
                "run_job",
                {"job": "web-unit"},
                "TypeError: dayjs.tz is not a function (node_modules from cache key web-deps-6c1f)",
            )
        ],
        [
            ("set_cache_key", {"cache": "web-deps", "key": "hashFiles('pnpm-lock.yaml')"}, "saved"),
            ("run_job", {"job": "web-unit"}, "1,904 passed"),
        ],
        "pipeline-green",
        env=WEB,
    ),
    L(
        "ci_fork_pr_no_secrets",
        PLATFORM,
        "05-15 10:15",
        "Pull requests from outside contributors fail in the signing step because CI withholds secrets from forks",
        [("run_job", {"job": "android-assemble"}, "UPLOAD_STORE_FILE is empty: secrets are not passed to forked PRs")],
        [
            ("edit_workflow", {"job": "android-assemble", "condition": "skip signing on forks"}, "merged"),
            ("run_job", {"job": "android-assemble"}, "unsigned debug build green"),
        ],
        "pipeline-green",
    ),
    L(
        "ci_artifact_expired_before_release",
        PLATFORM,
        "05-18 17:40",
        "The store release job cannot find the build it should publish because the artifact was deleted after a day",
        [("download_artifact", {"name": "ios-ipa-30977"}, "Artifact not found: expired (retention 1 day)")],
        [
            ("edit_workflow", {"job": "ios-build", "retention_days": "14"}, "merged"),
            ("run_pipeline", {"pipeline": "harbor-ios"}, "artifact kept, release job published it"),
        ],
        "release-published",
    ),
    L(
        "ci_npm_private_registry_401",
        PLATFORM,
        "05-19 09:50",
        "Dependency install fails with 401 from our private npm registry on every pipeline since Monday",
        [("run_job", {"job": "web-unit"}, "npm ERR! 401 Unauthorized - GET https://npm.tidewater.dev/@tidewater%2fui")],
        [
            (
                "rotate_ci_credential",
                {"name": "NPM_AUTOMATION", "scope": "read:packages"},
                "rotated, expires in 90 days",
            ),
            ("run_job", {"job": "web-unit"}, "install ok"),
        ],
        "pipeline-green",
        env=WEB,
    ),
    L(
        "ci_playwright_browsers_proxy",
        PLATFORM,
        "05-20 14:25",
        "End-to-end web tests cannot start because the test browsers fail to download through the egress proxy",
        [
            (
                "run_job",
                {"job": "web-e2e"},
                "Error: Failed to download Chromium 131 from cdn.playwright.dev: ECONNRESET via proxy 10.8.0.1:3128",
            )
        ],
        [
            ("pin_image", {"job": "web-e2e", "image": "tidewater/playwright-fonts:1.4"}, "browsers baked into image"),
            ("run_job", {"job": "web-e2e"}, "96 passed"),
        ],
        "pipeline-green",
        env=WEB,
    ),
    # deploys
    L(
        "deploy_migration_lock_wait",
        PLATFORM,
        "05-21 22:10",
        "A production deploy hangs on its database migration, waiting for a lock held by a long analytics query",
        [
            (
                "run_migration",
                {"migration": "0142_add_trip_notes", "db": "jetty-main"},
                "still waiting after 900 s: AccessExclusiveLock blocked by pid 48811 (reporting query)",
            )
        ],
        [
            ("set_db_setting", {"name": "lock_timeout", "value": "5s"}, "set for migrations"),
            ("run_migration", {"migration": "0142_add_trip_notes", "db": "jetty-main"}, "applied on 3rd retry"),
        ],
        "deploy-green",
    ),
    L(
        "deploy_canary_probe_path",
        PLATFORM,
        "05-22 10:35",
        "Every canary of the API is marked unhealthy and rolled back although the service itself is fine",
        [
            (
                "start_canary",
                {"service": "jetty-api", "version": "5.3.0"},
                "target unhealthy: GET /health -> 404 (service now answers on /healthz)",
            )
        ],
        [
            ("set_lb_probe", {"service": "jetty-api", "path": "/healthz"}, "probe updated"),
            ("start_canary", {"service": "jetty-api", "version": "5.3.0"}, "canary healthy, promoted"),
        ],
        "deploy-green",
    ),
    L(
        "deploy_missing_env_var",
        PLATFORM,
        "05-25 15:15",
        "The new web release crash loops on boot because a setting added in code was never added to production",
        [
            (
                "read_logs",
                {"service": "tidewater-web"},
                "Error: required environment variable PEBBLE_IMG_BASE_URL is not set",
            )
        ],
        [
            ("set_env", {"service": "tidewater-web", "name": "PEBBLE_IMG_BASE_URL"}, "set in production"),
            ("deploy_service", {"service": "tidewater-web", "version": "4.20.1"}, "pods ready"),
        ],
        "deploy-green",
        env=WEB,
    ),
    L(
        "deploy_rollback_schema_break",
        PLATFORM,
        "05-26 19:30",
        "Rolling back the API failed because the older release cannot read a column the migration had renamed",
        [
            (
                "rollback",
                {"service": "jetty-api", "to": "5.2.4"},
                "psycopg.errors.UndefinedColumn: column trips.harbour_id does not exist",
            )
        ],
        [
            ("deploy_service", {"service": "jetty-api", "version": "5.3.1 hotfix"}, "roll forward done"),
            ("add_policy", {"repo": "jetty", "rule": "expand-contract migrations only"}, "lint rule added"),
        ],
        "deploy-green",
    ),
    L(
        "deploy_blue_green_session_key",
        PLATFORM,
        "05-27 08:00",
        "Everyone was signed out of the website during the blue-green switch because the two colours used different "
        "cookie keys",
        [
            (
                "switch_traffic",
                {"service": "tidewater-web", "to": "green"},
                "session cookie signature invalid for 100% of requests after switch",
            )
        ],
        [
            ("set_env", {"service": "tidewater-web", "name": "COOKIE_SIGNING_KEYS"}, "same keys on blue and green"),
            ("switch_traffic", {"service": "tidewater-web", "to": "green"}, "0 forced logouts"),
        ],
        "switch-clean",
        env=WEB,
    ),
    L(
        "deploy_gateway_limit_new_app_version",
        PLATFORM,
        "05-28 12:45",
        "After the app release the API gateway starts answering 429 to phones because the new version polls far more "
        "often",
        [
            (
                "read_metrics",
                {"metric": "gateway_429_rate", "service": "jetty-api"},
                "29% of requests from app 4.20.x limited (poll every 5 s)",
            )
        ],
        [
            ("set_flag", {"flag": "feed-poll-interval-s", "value": "60"}, "flag 60 for all apps"),
            ("read_metrics", {"metric": "gateway_429_rate", "service": "jetty-api"}, "0.2%"),
        ],
        "gateway-normal",
    ),
    L(
        "deploy_ota_bundle_native_mismatch",
        PLATFORM,
        "05-29 17:10",
        "An over-the-air JavaScript update crashed older app installs because it needed a newer native binary",
        [
            (
                "read_crashes",
                {"release": "ota-2026.05.29"},
                "Invariant Violation: TurboModuleRegistry.getEnforcing(...): 'TideHaptics' could not be found",
            )
        ],
        [
            ("rollback_ota", {"channel": "production", "to": "ota-2026.05.22"}, "rolled back"),
            ("publish_ota", {"channel": "production", "target_binary": ">=4.20.0"}, "published only to 4.20+"),
        ],
        "crash-free",
    ),
    L(
        "deploy_image_pull_secret_expired",
        PLATFORM,
        "06-01 06:40",
        "New pods of the release sit in ImagePullBackOff because the cluster's registry pull secret expired",
        [
            (
                "describe_pod",
                {"pod": "jetty-api-7c9d", "namespace": "prod"},
                "Failed to pull image: 401 Unauthorized from registry.tidewater.dev",
            )
        ],
        [
            ("refresh_pull_secret", {"namespace": "prod", "registry": "registry.tidewater.dev"}, "secret refreshed"),
            ("describe_pod", {"pod": "jetty-api-7c9d", "namespace": "prod"}, "Running"),
        ],
        "deploy-green",
    ),
    L(
        "deploy_feature_branch_db_exhausted",
        PLATFORM,
        "06-02 13:20",
        "Deploys to the shared test environment fail because preview apps used up every database connection",
        [
            (
                "deploy_service",
                {"service": "jetty-api", "env": "test"},
                "FATAL: remaining connection slots are reserved for non-replication superuser connections",
            )
        ],
        [
            ("delete_previews", {"older_than_days": "3"}, "31 preview apps removed"),
            ("set_config", {"service": "jetty-api", "key": "db_pool_size_preview", "value": "2"}, "applied"),
        ],
        "deploy-green",
    ),
    # release-bot runs (only agent ship-bot sees these)
    L(
        "bot_release_notes_too_long",
        SHIPBOT,
        "06-03 09:00",
        "Publishing store metadata fails because the what's new text is longer than Google Play allows",
        [
            (
                "publish_metadata",
                {"store": "google-play", "locale": "de-DE"},
                "Release notes exceed 500 characters (612)",
            )
        ],
        [
            ("trim_release_notes", {"store": "google-play", "limit": "500"}, "trimmed 9 locales"),
            ("publish_metadata", {"store": "google-play", "locale": "de-DE"}, "published"),
        ],
        "metadata-published",
    ),
    L(
        "bot_phased_release_halted",
        SHIPBOT,
        "06-04 07:30",
        "The staged rollout stopped on its own at 5 percent after crash-free users dropped",
        [("resume_rollout", {"store": "google-play", "version": "4.21.0"}, "rollout halted: crash-free users 97.1%")],
        [
            ("upload_build", {"store": "google-play", "version": "4.21.1"}, "hotfix uploaded"),
            ("resume_rollout", {"store": "google-play", "version": "4.21.1"}, "rollout 20%, crash-free 99.8%"),
        ],
        "rollout-continues",
    ),
    L(
        "bot_screenshot_dimensions_rejected",
        SHIPBOT,
        "06-05 11:15",
        "App Store screenshot upload is rejected for the largest iPhone size because the images have the wrong "
        "dimensions",
        [("upload_screenshots", {"display": "6.9-inch"}, "IMAGE_INCORRECT_DIMENSIONS: 1290x2796 not allowed")],
        [
            ("render_screenshots", {"display": "6.9-inch", "size": "1320x2868"}, "40 screenshots rendered"),
            ("upload_screenshots", {"display": "6.9-inch"}, "accepted"),
        ],
        "screenshots-uploaded",
    ),
    # payments and refunds
    L(
        "pay_webhook_signature_old_secret",
        PAYMENTS,
        "06-08 10:00",
        "Payment provider webhooks fail signature checks on some pods after the endpoint signing secret was rolled",
        [
            (
                "replay_webhook",
                {"event": "charge.succeeded", "service": "tollgate"},
                "SignatureVerificationError: no signatures found matching the expected signature (pod tollgate-2)",
            )
        ],
        [
            ("restart_service", {"service": "tollgate", "reason": "reload rolled signing secret"}, "3 pods restarted"),
            ("replay_webhook", {"event": "charge.succeeded", "service": "tollgate"}, "200 on all pods"),
        ],
        "webhooks-verified",
    ),
    L(
        "pay_partial_refund_yen_rounding",
        PAYMENTS,
        "06-09 14:30",
        "Partial refunds in Japanese yen are refused as larger than the charge because amounts were multiplied by 100",
        [
            (
                "refund",
                {"charge": "ch_3Q7", "amount": "1200", "currency": "jpy"},
                "amount_too_large: Refund amount (¥120,000) is greater than unrefunded amount (¥4,800)",
            )
        ],
        [
            ("deploy_service", {"service": "tollgate", "version": "zero-decimal currency table"}, "deployed"),
            ("refund", {"charge": "ch_3Q7", "amount": "1200", "currency": "jpy"}, "refund re_9 succeeded ¥1,200"),
        ],
        "refund-issued",
    ),
    L(
        "pay_refund_returned_by_bank",
        PAYMENTS,
        "06-10 09:45",
        "A refund shows as pending for ten days and then fails because the customer's card account was closed",
        [
            (
                "lookup_refund",
                {"refund": "re_4411"},
                "status failed, failure_reason expired_or_canceled_card",
            )
        ],
        [
            ("issue_store_credit", {"customer": "cus_81x", "amount": "34.99", "currency": "eur"}, "credit issued"),
            ("notify_customer", {"template": "refund-as-credit"}, "email sent"),
        ],
        "customer-refunded",
    ),
    L(
        "pay_3ds_challenge_in_webview",
        PAYMENTS,
        "06-11 16:00",
        "Card checkout inside the app never completes because the bank's 3-D Secure page is blocked in the embedded "
        "web view",
        [
            (
                "test_checkout",
                {"card": "3ds-required", "platform": "android"},
                "payment_intent requires_action; challenge window blocked: popups disabled in WebView",
            )
        ],
        [
            (
                "release_app_fix",
                {"change": "open challenge in Custom Tabs / SFSafariViewController", "version": "4.21.2"},
                "ok",
            ),
            ("test_checkout", {"card": "3ds-required", "platform": "android"}, "succeeded after challenge"),
        ],
        "checkout-completes",
    ),
    L(
        "pay_apple_pay_processing_cert",
        PAYMENTS,
        "06-12 08:20",
        "Apple Pay shows Payment Not Completed for every customer because the payment processing certificate lapsed",
        [
            (
                "test_checkout",
                {"card": "apple-pay", "platform": "ios"},
                "PKPaymentAuthorizationStatus failure: payment data could not be decrypted (certificate expired)",
            )
        ],
        [
            ("renew_merchant_certificate", {"merchant": "merchant.app.tidewater", "kind": "payment processing"}, "ok"),
            ("test_checkout", {"card": "apple-pay", "platform": "ios"}, "succeeded"),
        ],
        "checkout-completes",
    ),
    L(
        "pay_play_purchases_not_acknowledged",
        PAYMENTS,
        "06-15 11:30",
        "Google Play subscriptions are refunded automatically after three days because the server never acknowledged "
        "them",
        [
            (
                "lookup_purchase",
                {"order": "GPA.3318-2291", "store": "google-play"},
                "acknowledgementState 0; refunded: not acknowledged within 3 days",
            )
        ],
        [
            ("deploy_service", {"service": "tollgate", "version": "acknowledge on verify"}, "deployed"),
            ("lookup_purchase", {"order": "GPA.3320-0017", "store": "google-play"}, "acknowledgementState 1"),
        ],
        "purchases-kept",
        supporting=3,
    ),
    L(
        "pay_app_store_notifications_v2",
        PAYMENTS,
        "06-16 15:10",
        "Subscription renewals from iPhone users are not reflected in accounts since Apple switched our server "
        "notifications to version 2",
        [
            (
                "read_logs",
                {"service": "tollgate"},
                "KeyError: 'latest_receipt_info' parsing notification (signedPayload present)",
            )
        ],
        [
            ("deploy_service", {"service": "tollgate", "version": "App Store Server Notifications V2 decoder"}, "ok"),
            ("replay_notifications", {"since": "06-01"}, "4,112 renewals applied"),
        ],
        "renewals-applied",
    ),
    L(
        "pay_double_charge_retry",
        PAYMENTS,
        "06-17 10:05",
        "Some customers were charged twice when the app retried a payment after a timeout",
        [
            (
                "lookup_charges",
                {"customer": "cus_77q"},
                "two charges of 12.00 EUR 31 s apart, no idempotency key on the second",
            )
        ],
        [
            ("deploy_service", {"service": "tollgate", "version": "Idempotency-Key per checkout attempt"}, "deployed"),
            ("refund", {"charge": "ch_dup", "amount": "12.00", "currency": "eur"}, "duplicate refunded"),
        ],
        "no-double-charges",
    ),
    L(
        "pay_dispute_evidence_late",
        PAYMENTS,
        "06-18 13:40",
        "Chargebacks are lost by default because dispute evidence is submitted after the deadline",
        [
            (
                "lookup_dispute",
                {"dispute": "dp_502"},
                "status lost: evidence_details.due_by passed 2 days before submission",
            )
        ],
        [
            ("schedule_job", {"job": "dispute-evidence", "every": "6h"}, "scheduled"),
            ("lookup_dispute", {"dispute": "dp_519"}, "evidence submitted 5 days before due_by"),
        ],
        "disputes-answered",
    ),
    L(
        "pay_tax_provider_timeout",
        PAYMENTS,
        "06-19 18:00",
        "Checkout spins and then errors during peak hours because the sales tax calculation call times out",
        [("test_checkout", {"card": "visa", "platform": "web"}, "TaxProviderTimeout: /v1/calculate took 10,000 ms")],
        [
            (
                "set_config",
                {"service": "tollgate", "key": "tax_timeout_ms", "value": "1500 then cached estimate"},
                "ok",
            ),
            ("test_checkout", {"card": "visa", "platform": "web"}, "succeeded in 1.9 s"),
        ],
        "checkout-completes",
    ),
    L(
        "pay_payout_reconciliation_fees",
        PAYMENTS,
        "06-22 08:30",
        "The daily payout does not match the sum of captured charges in the ledger and finance flags it as "
        "unreconciled",
        [
            (
                "run_reconciliation",
                {"date": "2026-06-21"},
                "payout 48,211.40 vs ledger 49,905.12: difference 1,693.72",
            )
        ],
        [
            ("deploy_service", {"service": "ledger-sync", "version": "record processor fees as separate lines"}, "ok"),
            ("run_reconciliation", {"date": "2026-06-21"}, "difference 0.00"),
        ],
        "books-reconciled",
    ),
    # customer care
    L(
        "care_account_locked_attempts",
        CARE,
        "06-23 09:10",
        "Customer is locked out of their account after too many wrong password attempts",
        [
            (
                "try_sign_in",
                {"provider": "password", "account": "acct_5521"},
                "423 Locked: 10 failed attempts, locked 24 h",
            )
        ],
        [
            ("unlock_account", {"account": "acct_5521", "reason": "verified by email"}, "unlocked"),
            ("send_email", {"template": "password-reset", "service": "driftmail"}, "delivered"),
        ],
        "customer-can-sign-in",
    ),
    L(
        "care_app_store_refund_request",
        CARE,
        "06-23 14:00",
        "Customer asks us to refund a subscription they bought through the iPhone App Store",
        [
            (
                "refund",
                {"charge": "apple-iap-2000061", "amount": "59.99", "currency": "usd"},
                "not refundable by merchant",
            )
        ],
        [
            ("send_macro", {"macro": "apple-refund-reportaproblem"}, "sent link to reportaproblem.apple.com"),
            ("tag_ticket", {"ticket": "T-88120", "tag": "iap-refund-apple"}, "tagged"),
        ],
        "ticket-solved",
    ),
    L(
        "care_email_change_typo",
        CARE,
        "06-24 10:30",
        "Customer cannot finish changing their email because the confirmation went to a mistyped address",
        [("lookup_message", {"to": "j***@gmial.com", "service": "driftmail"}, "bounced: domain gmial.com has no MX")],
        [
            ("cancel_email_change", {"account": "acct_9090"}, "pending change cancelled"),
            ("start_email_change", {"account": "acct_9090", "to": "j***@gmail.com"}, "confirmation delivered"),
        ],
        "email-changed",
    ),
    L(
        "care_account_deletion_request",
        CARE,
        "06-24 16:45",
        "Customer wants their account and all their personal data erased",
        [("delete_account", {"account": "acct_1203"}, "blocked: active subscription through Google Play")],
        [
            ("send_macro", {"macro": "cancel-play-subscription-first"}, "sent"),
            ("delete_account", {"account": "acct_1203"}, "erasure job queued, completes in 30 days"),
        ],
        "erasure-confirmed",
    ),
    L(
        "care_no_notifications_device",
        CARE,
        "06-25 11:20",
        "Customer says they stopped receiving any alerts from the app on their phone",
        [("send_test_push", {"platform": "ios", "account": "acct_7781"}, "APNs 410 Unregistered: token inactive")],
        [
            ("send_macro", {"macro": "reenable-notifications-and-reopen"}, "sent"),
            ("send_test_push", {"platform": "ios", "account": "acct_7781"}, "delivered to new token"),
        ],
        "customer-gets-alerts",
    ),
    L(
        "care_promo_code_region",
        CARE,
        "06-26 09:40",
        "Customer's discount code is rejected at checkout even though the campaign is still running",
        [
            (
                "validate_code",
                {"code": "SPRINGTIDE", "account": "acct_3390"},
                "invalid: code valid in US, CA only; account country GB",
            )
        ],
        [
            ("issue_store_credit", {"customer": "acct_3390", "amount": "10.00", "currency": "gbp"}, "credit issued"),
            ("send_macro", {"macro": "promo-region-credit"}, "sent"),
        ],
        "ticket-solved",
    ),
    L(
        "care_duplicate_accounts_apple_relay",
        CARE,
        "06-29 13:15",
        "Customer has two separate accounts, one from Apple's hidden relay address and one from Google, and wants one",
        [
            (
                "merge_accounts",
                {"from": "acct_relay_11", "into": "acct_4402"},
                "refused: both accounts have subscriptions",
            )
        ],
        [
            ("transfer_subscription", {"from": "acct_relay_11", "into": "acct_4402"}, "moved"),
            ("merge_accounts", {"from": "acct_relay_11", "into": "acct_4402"}, "merged, relay login linked"),
        ],
        "accounts-merged",
    ),
    L(
        "care_receipt_with_vat_number",
        CARE,
        "06-30 10:00",
        "Customer needs an invoice reissued with their company VAT number for expenses",
        [("resend_receipt", {"order": "TW-204411"}, "receipt sent without buyer tax id")],
        [
            ("set_billing_details", {"customer": "acct_6671", "tax_id": "DE 811 907 980"}, "saved"),
            ("resend_receipt", {"order": "TW-204411"}, "invoice INV-204411-1 sent with VAT number"),
        ],
        "ticket-solved",
    ),
    # another tenant
    L(
        "sm_android_startup_baseline_profile",
        SALTMARSH,
        "05-06 09:30",
        "Android cold start got much slower in the latest release because the baseline profile was left out of the "
        "bundle",
        [
            (
                "run_benchmark",
                {"suite": "startup", "variant": "release"},
                "timeToInitialDisplay median 1,840 ms (was 910)",
            )
        ],
        [
            ("edit_build", {"module": "app", "change": "include baselineProfile from :benchmark"}, "ok"),
            ("run_benchmark", {"suite": "startup", "variant": "release"}, "timeToInitialDisplay median 930 ms"),
        ],
        "startup-ok",
        env=ANDROID,
    ),
    L(
        "sm_web_hydration_timezone",
        SALTMARSH,
        "05-12 10:10",
        "Server-rendered pages throw hydration mismatch errors because dates are formatted in the server's timezone",
        [("read_logs", {"service": "marsh-web"}, "Hydration failed: server rendered '09:00' but client '11:00'")],
        [
            ("deploy_service", {"service": "marsh-web", "version": "format dates on client only"}, "deployed"),
            ("read_logs", {"service": "marsh-web"}, "no hydration errors in 24 h"),
        ],
        "web-errors-clear",
        env=WEB,
    ),
    L(
        "sm_web_push_vapid_regenerated",
        SALTMARSH,
        "05-19 08:45",
        "Browser push subscriptions all stopped working after the VAPID key pair was regenerated",
        [
            (
                "send_test_push",
                {"platform": "web", "service": "heron-push"},
                "403 from push service: VAPID credentials mismatch",
            )
        ],
        [
            (
                "release_app_fix",
                {"change": "resubscribe when applicationServerKey changed", "version": "web 2.40"},
                "ok",
            ),
            ("send_test_push", {"platform": "web", "service": "heron-push"}, "201 Created"),
        ],
        "push-delivered",
        env=WEB,
    ),
    L(
        "sm_preview_wildcard_dns",
        SALTMARSH,
        "05-26 14:00",
        "Preview environments for pull requests cannot be reached because the wildcard DNS record disappeared",
        [("check_url", {"url": "https://pr-812.preview.saltmarsh.dev"}, "NXDOMAIN")],
        [
            ("update_dns", {"record": "CNAME *.preview.saltmarsh.dev", "value": "ingress.saltmarsh.dev"}, "published"),
            ("check_url", {"url": "https://pr-812.preview.saltmarsh.dev"}, "200"),
        ],
        "previews-reachable",
    ),
    L(
        "sm_monorepo_affected_base_branch",
        SALTMARSH,
        "06-02 11:30",
        "Every CI run builds and tests all projects of the monorepo since the default branch was renamed",
        [
            (
                "run_job",
                {"job": "affected"},
                "fatal: ambiguous argument 'origin/master': unknown revision; running all 64",
            )
        ],
        [
            ("set_ci_variable", {"name": "AFFECTED_BASE", "value": "origin/main"}, "set"),
            ("run_job", {"job": "affected"}, "3 affected projects"),
        ],
        "pipeline-green",
    ),
    L(
        "sm_gmail_one_click_unsubscribe",
        SALTMARSH,
        "06-09 16:20",
        "Gmail started deferring our newsletter because the messages lack a one-click unsubscribe header",
        [
            (
                "check_headers",
                {"message": "newsletter to gmail"},
                "421-4.7.28 unsolicited mail rate limited: missing List-Unsubscribe-Post",
            )
        ],
        [
            ("set_config", {"service": "marsh-mailer", "key": "list_unsubscribe_post", "value": "One-Click"}, "ok"),
            ("check_headers", {"message": "newsletter to gmail"}, "250 accepted"),
        ],
        "mail-accepted",
    ),
    L(
        "sm_cdn_double_compression",
        SALTMARSH,
        "06-16 12:40",
        "Some browsers show garbled JavaScript because assets are compressed by the build and again by the edge",
        [("check_url", {"url": "https://cdn.saltmarsh.dev/app.js"}, "SyntaxError: illegal character U+001F at 1:1")],
        [
            ("set_edge_rule", {"path": "*.br", "compression": "off, Content-Encoding passthrough"}, "rule live"),
            ("check_url", {"url": "https://cdn.saltmarsh.dev/app.js"}, "valid JavaScript, content-encoding br"),
        ],
        "assets-valid",
        env=WEB,
    ),
    L(
        "sm_passkey_rp_id_mismatch",
        SALTMARSH,
        "06-23 10:50",
        "Creating a passkey fails after the login page moved to a new domain because the relying party id still names "
        "the old one",
        [
            (
                "try_sign_in",
                {"provider": "passkey", "service": "marsh-auth"},
                "SecurityError: The relying party ID is not a registrable domain suffix of the current origin",
            )
        ],
        [
            ("set_config", {"service": "marsh-auth", "key": "webauthn_rp_id", "value": "saltmarsh.app"}, "applied"),
            ("try_sign_in", {"provider": "passkey", "service": "marsh-auth"}, "passkey registered"),
        ],
        "sign-in-works",
    ),
]

# -- queries ----------------------------------------------------------------------------------

P, PAY, CARE_, SALT = ASK_PLATFORM, ASK_PAY, ASK_CARE, ASK_SALT

QUERIES: list[Ask] = [
    # exact: a lesson's own task, or its error text
    Q(
        "exact",
        P,
        "iOS release archive fails at code signing because the Apple distribution certificate has expired",
        "ios_distribution_cert_expired",
    ),
    Q(
        "exact",
        P,
        "pod install on CI hangs and times out while fetching specs from the CocoaPods trunk CDN",
        "ios_pod_install_trunk_timeout",
    ),
    Q("exact", P, "Keystore was tampered with, or password was incorrect", "android_keystore_password_rotated"),
    Q(
        "exact",
        P,
        "Instrumented UI tests on the Android emulator fail at random with view-not-found timeouts",
        "android_emulator_ui_tests_flaky",
    ),
    Q(
        "exact",
        P,
        "App Review rejected the submission because the reviewer could not log in with the demo account",
        "review_demo_account_locked",
    ),
    Q("exact", P, "ITMS-91053: Missing API declaration", "review_privacy_manifest_reasons"),
    Q("exact", P, "APNs 403 ExpiredProviderToken", "push_apns_provider_token_stale"),
    Q(
        "exact",
        P,
        "Users get the same notification two or three times when the push worker retries a message",
        "push_duplicate_on_redelivery",
    ),
    Q(
        "exact",
        P,
        "The CDN answers 526 for the whole site after the origin certificate was renewed",
        "cdn_origin_cert_hostname",
    ),
    Q(
        "exact",
        P,
        "A 10 percent rollout went to every user because a broader targeting rule sat above the percentage rule",
        "flags_rule_order_everyone",
    ),
    Q(
        "exact",
        P,
        "Sign in with Apple fails for everyone with invalid_client because the generated client secret expired",
        "signin_apple_client_secret_expired",
    ),
    Q("exact", P, "ApiException: 10 (DEVELOPER_ERROR)", "signin_google_play_signing_sha1"),
    Q(
        "exact",
        P,
        "DKIM signatures fail after rotating to a 2048-bit key because the DNS record was cut off",
        "email_dkim_record_split",
    ),
    Q(
        "exact",
        P,
        "CI keeps installing yesterday's dependencies because the cache is keyed on package.json instead of the "
        "lockfile",
        "ci_node_modules_cache_key",
    ),
    Q(
        "exact",
        P,
        "A production deploy hangs on its database migration, waiting for a lock held by a long analytics query",
        "deploy_migration_lock_wait",
    ),
    Q(
        "exact",
        P,
        "Every canary of the API is marked unhealthy and rolled back although the service itself is fine",
        "deploy_canary_probe_path",
    ),
    Q("exact", P, "Error: required environment variable PEBBLE_IMG_BASE_URL is not set", "deploy_missing_env_var"),
    Q(
        "exact",
        PAY,
        "Partial refunds in Japanese yen are refused as larger than the charge because amounts were multiplied by 100",
        "pay_partial_refund_yen_rounding",
    ),
    Q(
        "exact",
        PAY,
        "Google Play subscriptions are refunded automatically after three days because the server never acknowledged "
        "them",
        "pay_play_purchases_not_acknowledged",
    ),
    Q(
        "exact",
        CARE_,
        "Customer is locked out of their account after too many wrong password attempts",
        "care_account_locked_attempts",
    ),
    Q(
        "exact",
        CARE_,
        "Customer needs an invoice reissued with their company VAT number for expenses",
        "care_receipt_with_vat_number",
    ),
    Q(
        "exact",
        SALT,
        "Every CI run builds and tests all projects of the monorepo since the default branch was renamed",
        "sm_monorepo_affected_base_branch",
    ),
    # paraphrase: the same problem in other words, mostly sharing no content word with the lesson
    Q(
        "paraphrase",
        P,
        "the iPhone store package can't be stamped anymore because our yearly developer credential ran out",
        "ios_distribution_cert_expired",
    ),
    Q(
        "paraphrase",
        P,
        "the iPhone export complains that the mobileprovision doesn't permit remote alerts",
        "ios_profile_push_entitlement",
    ),
    Q(
        "paraphrase",
        P,
        "since the macOS agents got a fresher toolchain our iPhone project won't compile",
        "ios_xcode_image_upgrade",
    ),
    Q(
        "paraphrase",
        P,
        "downloading third-party iPhone libraries in the pipeline stalls forever",
        "ios_pod_install_trunk_timeout",
    ),
    Q(
        "paraphrase",
        P,
        "Apple won't accept our binary because its internal counter matches one we sent before",
        "ios_build_number_reused",
    ),
    Q("paraphrase", P, "iPhone stack traces from the field are just hex, no function names", "ios_dsym_not_uploaded"),
    Q(
        "paraphrase",
        P,
        "beta people still can't install the new iPhone version, Apple has been chewing on it all morning",
        "ios_testflight_processing_stuck",
    ),
    Q(
        "paraphrase",
        P,
        "since someone changed the passphrase of our jks, producing the Google Play artifact breaks",
        "android_keystore_password_rotated",
    ),
    Q(
        "paraphrase",
        P,
        "the shipped version for Google phones dies at startup, minification threw away the JSON types",
        "android_r8_stripped_model",
    ),
    Q(
        "paraphrase",
        P,
        "the store won't publish us until we raise the OS version we compile for",
        "android_target_sdk_too_low",
    ),
    Q(
        "paraphrase",
        P,
        "espresso checks on the virtual device are unreliable, sometimes they can't find buttons",
        "android_emulator_ui_tests_flaky",
    ),
    Q(
        "paraphrase",
        P,
        "whoever vets our build at Cupertino says the sample login we handed over doesn't work",
        "review_demo_account_locked",
    ),
    Q(
        "paraphrase",
        P,
        "Cupertino turned our version down: people who already paid can't get their plan back on a new phone",
        "review_restore_purchases_missing",
    ),
    Q(
        "paraphrase",
        P,
        "Apple wants justification strings for certain system calls before we can ship",
        "review_privacy_manifest_reasons",
    ),
    Q(
        "paraphrase",
        P,
        "the Android store says what we declared about personal info doesn't match what a bundled library gathers "
        "about whereabouts",
        "play_data_safety_mismatch",
    ),
    Q(
        "paraphrase",
        P,
        "iPhone alerts quit a while after the sender restarts, like clockwork",
        "push_apns_provider_token_stale",
    ),
    Q(
        "paraphrase",
        P,
        "no alerts reach Pixel or Samsung phones since Google shut down the old sending interface",
        "push_fcm_legacy_endpoint_removed",
    ),
    Q(
        "paraphrase",
        P,
        "testers on TestFlight get no alerts while regular customers do",
        "push_sandbox_device_tokens",
    ),
    Q(
        "paraphrase",
        P,
        "people complain they're pinged repeatedly for one event",
        "push_duplicate_on_redelivery",
    ),
    Q(
        "paraphrase",
        P,
        "the big promo blast to every Pixel and Samsung owner mostly bounced because we went too fast for Google",
        "push_campaign_quota_429",
    ),
    Q(
        "paraphrase",
        P,
        "we shipped the site but people are still running last week's scripts",
        "cdn_html_cached_old_bundle",
    ),
    Q(
        "paraphrase",
        P,
        "typefaces on our marketing pages don't show up, devtools has a cross-origin complaint",
        "cdn_fonts_cors_blocked",
    ),
    Q(
        "paraphrase",
        P,
        "every page shows an edge error about bad TLS at the backend since we swapped it",
        "cdn_origin_cert_hostname",
    ),
    Q(
        "paraphrase",
        P,
        "our release script's invalidation of edge files gets throttled",
        "cdn_purge_api_rate_limit",
    ),
    Q("paraphrase", P, "avatar thumbnails of huge camera uploads time out", "cdn_image_resize_504"),
    Q(
        "paraphrase",
        P,
        "people who visited before are stuck on an outdated site build until they clear browser storage",
        "web_service_worker_stale_shell",
    ),
    Q(
        "paraphrase",
        P,
        "disabling a toggle doesn't affect the iPhone and Android clients for ages",
        "flags_mobile_cache_ttl",
    ),
    Q(
        "paraphrase",
        P,
        "the gradual launch hit everybody instead of a small slice",
        "flags_rule_order_everyone",
    ),
    Q(
        "paraphrase",
        P,
        "half-built functionality appeared for all visitors when the toggle system was down during boot",
        "flags_default_on_when_unreachable",
    ),
    Q(
        "paraphrase",
        P,
        "A/B test participants keep switching groups after signing out and back in",
        "flags_bucketing_resets_on_logout",
    ),
    Q(
        "paraphrase",
        P,
        "nobody can log in via their iCloud identity since this morning",
        "signin_apple_client_secret_expired",
    ),
    Q(
        "paraphrase",
        P,
        "phones boot people to the login screen out of nowhere, seems two calls renew credentials simultaneously",
        "signin_refresh_token_race",
    ),
    Q(
        "paraphrase",
        P,
        "passwordless emails are burned before the person taps them because security gateways follow URLs",
        "signin_magic_link_prefetched",
    ),
    Q(
        "paraphrase",
        P,
        "backend denies brand new bearer tokens since the identity provider swapped its JWK material",
        "signin_jwks_cached_after_rotation",
    ),
    Q(
        "paraphrase",
        P,
        "deep URLs from mail launch the browser rather than our iPhone client",
        "signin_universal_links_aasa",
    ),
    Q(
        "paraphrase",
        P,
        "text message verification codes take forever in Indonesia and Nigeria",
        "signin_sms_codes_late",
    ),
    Q("paraphrase", P, "since moving to a different ESP our messages go to junk", "email_spf_missing_new_provider"),
    Q(
        "paraphrase",
        P,
        "Brazilian customers get a purchase mail that says Olá followed by curly braces",
        "email_template_locale_missing_var",
    ),
    Q(
        "paraphrase",
        P,
        "newly registered folks wait ages for their greeting message",
        "email_queue_backlog_throttle",
    ),
    Q(
        "paraphrase",
        P,
        "visual regression diffs show up on certain build agents only, looks like subpixel smoothing",
        "ci_snapshot_fonts_differ",
    ),
    Q(
        "paraphrase",
        P,
        "contributions from external people break in the pipeline where the keystore is needed",
        "ci_fork_pr_no_secrets",
    ),
    Q(
        "paraphrase",
        P,
        "the shipping step can't locate the ipa, it was already cleaned up",
        "ci_artifact_expired_before_release",
    ),
    Q(
        "paraphrase",
        P,
        "browser automation suite can't fetch its Chrome binaries via our outbound gateway",
        "ci_playwright_browsers_proxy",
    ),
    Q(
        "paraphrase",
        P,
        "reverting the backend broke because the old code expects a field we relabelled",
        "deploy_rollback_schema_break",
    ),
    Q(
        "paraphrase",
        P,
        "a code push killed the client for people who hadn't upgraded from the store",
        "deploy_ota_bundle_native_mismatch",
    ),
    Q(
        "paraphrase",
        P,
        "kubernetes can't fetch containers, auth error from our image host",
        "deploy_image_pull_secret_expired",
    ),
    Q(
        "paraphrase",
        P,
        "rollout to the common QA env fails, postgres is full because of all the PR environments",
        "deploy_feature_branch_db_exhausted",
    ),
    Q(
        "paraphrase",
        PAY,
        "callbacks from the card processor are rejected as unauthentic by one replica since we changed the HMAC key",
        "pay_webhook_signature_old_secret",
    ),
    Q(
        "paraphrase",
        PAY,
        "the bank verification step doesn't show up during an in-app purchase",
        "pay_3ds_challenge_in_webview",
    ),
    Q(
        "paraphrase",
        PAY,
        "yearly plans bought on Apple devices stop extending in our system since Apple's new callback format",
        "pay_app_store_notifications_v2",
    ),
    Q(
        "paraphrase",
        PAY,
        "we forfeit bank reversals because our paperwork arrives after the cutoff",
        "pay_dispute_evidence_late",
    ),
    Q(
        "paraphrase",
        PAY,
        "the transfer from our gateway never equals what the books say we sold",
        "pay_payout_reconciliation_fees",
    ),
    Q(
        "paraphrase",
        CARE_,
        "someone wants money back for a plan they paid for via Apple",
        "care_app_store_refund_request",
    ),
    Q(
        "paraphrase",
        CARE_,
        "user wanted a different login mailbox but our verify message went to a misspelled provider",
        "care_email_change_typo",
    ),
    Q("paraphrase", CARE_, "a user asked us to wipe everything we hold on them", "care_account_deletion_request"),
    Q(
        "paraphrase",
        CARE_,
        "person ended up with two profiles, one under a privaterelay mailbox",
        "care_duplicate_accounts_apple_relay",
    ),
    Q(
        "paraphrase",
        SALT,
        "React complains the SSR markup and the browser markup differ, times off by two hours",
        "sm_web_hydration_timezone",
    ),
    Q(
        "paraphrase",
        SALT,
        "enrolling a biometric credential broke after the sign-in page changed hostname",
        "sm_passkey_rp_id_mismatch",
    ),
    # morphology: other word forms
    Q("morphology", P, "expiring distribution certificates breaking iOS archiving", "ios_distribution_cert_expired"),
    Q(
        "morphology",
        P,
        "App Store Connect rejecting uploads over a reused bundle version",
        "ios_build_number_reused",
    ),
    Q(
        "morphology",
        P,
        "Android release crashing on launch after shrinking removed reflected classes",
        "android_r8_stripped_model",
    ),
    Q("morphology", P, "flaky instrumented tests failing randomly on emulators", "android_emulator_ui_tests_flaky"),
    Q(
        "morphology",
        P,
        "App Review rejecting us for missing restores of bought subscriptions",
        "review_restore_purchases_missing",
    ),
    Q(
        "morphology",
        P,
        "push notifications stopped delivering, provider token expiring",
        "push_apns_provider_token_stale",
    ),
    Q("morphology", P, "marketing broadcasts throttled by FCM quotas", "push_campaign_quota_429"),
    Q("morphology", P, "font loading blocked by CORS", "cdn_fonts_cors_blocked"),
    Q("morphology", P, "resizing of large images timing out at the edge", "cdn_image_resize_504"),
    Q(
        "morphology",
        P,
        "flag rollouts reaching every user with the targeting rules ordered wrong",
        "flags_rule_order_everyone",
    ),
    Q(
        "morphology",
        P,
        "experiment variants flipping between sessions after logging out",
        "flags_bucketing_resets_on_logout",
    ),
    Q(
        "morphology",
        P,
        "email login links already used, scanners prefetching them",
        "signin_magic_link_prefetched",
    ),
    Q("morphology", P, "rotated signing keys, API rejecting sessions", "signin_jwks_cached_after_rotation"),
    Q("morphology", P, "DKIM failing after key rotations, DNS record cut", "email_dkim_record_split"),
    Q("morphology", P, "welcome email delayed by queue backlogs and throttling", "email_queue_backlog_throttle"),
    Q(
        "morphology",
        P,
        "artifacts expiring before the store release jobs run",
        "ci_artifact_expired_before_release",
    ),
    Q("morphology", P, "migrations hanging on locks while deploying", "deploy_migration_lock_wait"),
    Q("morphology", P, "rollbacks failing since a migration renamed columns", "deploy_rollback_schema_break"),
    Q("morphology", PAY, "customers double charged on retried payments", "pay_double_charge_retry"),
    Q("morphology", PAY, "tax calculations timing out at checkout", "pay_tax_provider_timeout"),
    Q(
        "morphology",
        CARE_,
        "customer deleting their account and erasing personal data",
        "care_account_deletion_request",
    ),
    Q("morphology", SALT, "compressed assets double compressing at the edge", "sm_cdn_double_compression"),
    # stopword_heavy: a few content words in a lot of filler
    Q(
        "stopword_heavy",
        P,
        "hey so can you look into why the thing with the keystore is happening again on the android one",
        "android_keystore_password_rotated",
    ),
    Q(
        "stopword_heavy",
        P,
        "um is there anything we did before about when it's the pods that just hang",
        "ios_pod_install_trunk_timeout",
    ),
    Q(
        "stopword_heavy",
        P,
        "could you please help me with the thing where the dsyms are not there and it is all just addresses",
        "ios_dsym_not_uploaded",
    ),
    Q(
        "stopword_heavy",
        P,
        "so what do we do when it is stuck in processing and it has been like that for hours",
        "ios_testflight_processing_stuck",
    ),
    Q(
        "stopword_heavy",
        P,
        "i think it is the target api level thing again, what was it that we did the last time",
        "android_target_sdk_too_low",
    ),
    Q(
        "stopword_heavy",
        P,
        "can you do the same as what we did when they said they could not get in with the demo login",
        "review_demo_account_locked",
    ),
    Q(
        "stopword_heavy",
        P,
        "what was it that we had to do for the beta people who were not getting any of the pushes",
        "push_sandbox_device_tokens",
    ),
    Q(
        "stopword_heavy",
        P,
        "is it the same as that time when the site was still showing the old js after we had deployed it",
        "cdn_html_cached_old_bundle",
    ),
    Q(
        "stopword_heavy",
        P,
        "can you please just do whatever it was we did for that purge thing that was getting limited",
        "cdn_purge_api_rate_limit",
    ),
    Q(
        "stopword_heavy",
        P,
        "why is it that when we turn it off in the flags it is still on for them for hours and hours",
        "flags_mobile_cache_ttl",
    ),
    Q(
        "stopword_heavy",
        P,
        "the staging one is reading the flags of the real one again, how did we fix that",
        "flags_staging_uses_prod_key",
    ),
    Q(
        "stopword_heavy",
        P,
        "it is that google sign in thing again where it only breaks in the one that is from the store",
        "signin_google_play_signing_sha1",
    ),
    Q(
        "stopword_heavy",
        P,
        "so the codes are not getting to the people in some of the countries again, any idea",
        "signin_sms_codes_late",
    ),
    Q(
        "stopword_heavy",
        P,
        "she says she is just not getting the reset mails at all, what do we do about that",
        "email_reset_suppressed_address",
    ),
    Q(
        "stopword_heavy",
        P,
        "why is it that the tests with the screenshots only fail on some of the machines and not the others",
        "ci_snapshot_fonts_differ",
    ),
    Q(
        "stopword_heavy",
        P,
        "what do we do when it is the 401 from our npm thing in all of the pipelines",
        "ci_npm_private_registry_401",
    ),
    Q(
        "stopword_heavy",
        P,
        "could you do that thing for when the canary keeps on being marked as unhealthy",
        "deploy_canary_probe_path",
    ),
    Q(
        "stopword_heavy",
        P,
        "it is the pods and the image pull thing again, they are not able to get the image",
        "deploy_image_pull_secret_expired",
    ),
    Q(
        "stopword_heavy",
        PAY,
        "so what do we do about it when apple pay is just not completing for any of them",
        "pay_apple_pay_processing_cert",
    ),
    Q(
        "stopword_heavy",
        CARE_,
        "hi, so this person says they are not getting any of the alerts on their phone anymore, what do i tell them",
        "care_no_notifications_device",
    ),
    Q(
        "stopword_heavy",
        CARE_,
        "someone has a code for the sale and it is not working for them, what should we do for them",
        "care_promo_code_region",
    ),
    # realistic: long, messy requests with context, typos, pasted errors, urgency
    Q(
        "realistic",
        P,
        "urgent!! release 4.22 is blocked, fastlane says 'No signing certificate iOS Distribution found' - did the "
        "cert "
        "expire again?? need the ipa by 5pm",
        "ios_distribution_cert_expired",
    ),
    Q(
        "realistic",
        P,
        "hey, CI for the ios app went red over the weekend, nothing changed on our side afaik, lots of swift errors in "
        "some pod about sendable... did the mac image change?",
        "ios_xcode_image_upgrade",
    ),
    Q(
        "realistic",
        P,
        "trying to ship the hotfix but Play console keeps telling me version code 41902 has already been used, we "
        "rebuilt "
        "the release branch after a cherry pick. whats the fix",
        "android_version_code_used",
    ),
    Q(
        "realistic",
        P,
        "prod android crash on open: ClassNotFoundException com.tidewater.trips.model.Harbour ... only in release, "
        "debug "
        "is fine. proguard??",
        "android_r8_stripped_model",
    ),
    Q(
        "realistic",
        P,
        "got an email from app store connect after uploading: ITMS-91053 something about "
        "NSPrivacyAccessedAPICategoryFileTimestamp, cant submit now, help",
        "review_privacy_manifest_reasons",
    ),
    Q(
        "realistic",
        P,
        "play store rejected 4.22 again, policy email says the data safety section is wrong because of location from "
        "some ad sdk?? what did we change last time",
        "play_data_safety_mismatch",
    ),
    Q(
        "realistic",
        P,
        "android pushes are dead since this morning, ripple logs full of 404s from fcm.googleapis.com/fcm/send, did "
        "google finally kill the old api",
        "push_fcm_legacy_endpoint_removed",
    ),
    Q(
        "realistic",
        P,
        "support forwarding complaints: people getting the 'your tide alert' notif 3x. started after we moved ripple "
        "to the new queue",
        "push_duplicate_on_redelivery",
    ),
    Q(
        "realistic",
        P,
        "assets.tidewater.app fonts broken on the marketing site, chrome console: blocked by CORS policy no "
        "access-control-allow-origin. we just moved the font files",
        "cdn_fonts_cors_blocked",
    ),
    Q(
        "realistic",
        P,
        "image service falling over - pebble-img returns 504 for some avatars, seems like iphone HEIC photos that are "
        "like 20mb+",
        "cdn_image_resize_504",
    ),
    Q(
        "realistic",
        P,
        "we flipped new-checkout OFF an hour ago because of a bug but users on the apps still see it. the web is fine. "
        "why??",
        "flags_mobile_cache_ttl",
    ),
    Q(
        "realistic",
        P,
        "incident: beta-tidepools was visible to all web users for ~20 min this morning, looks like lighthouse was "
        "down "
        "when the pods started. how do we stop that happening",
        "flags_default_on_when_unreachable",
    ),
    Q(
        "realistic",
        P,
        "all apple logins failing w/ invalid_client from appleid.apple.com/auth/token since midnight, nothing "
        "deployed. "
        "pls help",
        "signin_apple_client_secret_expired",
    ),
    Q(
        "realistic",
        P,
        "folks at big companies say the login email link is 'already used' when they click it - sounds like outlook "
        "safe "
        "links or smth opening it first?",
        "signin_magic_link_prefetched",
    ),
    Q(
        "realistic",
        P,
        "jetty-api throwing 401 for everyone who logged in in the last hour, 'no key in JWKS for kid'... keelson "
        "rotated "
        "keys today",
        "signin_jwks_cached_after_rotation",
    ),
    Q(
        "realistic",
        P,
        "password reset link on iphone opens safari not the app anymore, i think since we added the www redirect on "
        "the "
        "cdn?",
        "signin_universal_links_aasa",
    ),
    Q(
        "realistic",
        P,
        "gmail puts our receipts in spam since we moved to the new ESP last week, header shows spf softfail",
        "email_spf_missing_new_provider",
    ),
    Q(
        "realistic",
        P,
        "welcome mails are going out like 60-90 min late, driftmail queue has 180k+ msgs in it and the provider is "
        "returning 429s",
        "email_queue_backlog_throttle",
    ),
    Q(
        "realistic",
        P,
        "iOS jobs sitting in 'queued' for over an hour again, we only have the 2 hosted macs. any way to get more "
        "capacity",
        "ci_mac_runner_queue",
    ),
    Q(
        "realistic",
        P,
        "outside contributor PR fails at android-assemble: UPLOAD_STORE_FILE is empty. do we just skip that for forks?",
        "ci_fork_pr_no_secrets",
    ),
    Q(
        "realistic",
        P,
        "deploy has been stuck on migration 0150 for 15 min, pg_stat_activity shows a big reporting query holding "
        "things up. what did we do last time",
        "deploy_migration_lock_wait",
    ),
    Q(
        "realistic",
        P,
        "tidewater-web pods crashlooping after the 4.23 deploy, logs: required environment variable SEARCH_API_URL is "
        "not set",
        "deploy_missing_env_var",
    ),
    Q(
        "realistic",
        PAY,
        "tollgate webhook replay fails on one pod only: SignatureVerificationError no signatures found matching... we "
        "rolled the secret yesterday",
        "pay_webhook_signature_old_secret",
    ),
    Q(
        "realistic",
        PAY,
        "finance pinging us, yesterday's payout is ~1.7k short of the ledger total again, is it the fee thing??",
        "pay_payout_reconciliation_fees",
    ),
    Q(
        "realistic",
        CARE_,
        "Ticket T-90211: customer bought the annual sub on iphone and wants money back asap, says they never used it. "
        "can we refund from our side?",
        "care_app_store_refund_request",
    ),
    Q(
        "realistic",
        SALT,
        "marsh-web logs flooded w/ 'Hydration failed' errors, server shows 09:00 client shows 11:00, only for users in "
        "europe",
        "sm_web_hydration_timezone",
    ),
    # distractor: shares words with a wrong lesson; the right one must win
    Q(
        "distractor",
        P,
        "App Store Connect says our build number was already used",
        "ios_build_number_reused",
        distractors="android_version_code_used",
    ),
    Q(
        "distractor",
        P,
        "Play Console rejects the upload because the version code was already used",
        "android_version_code_used",
        distractors="android_target_sdk_too_low ios_build_number_reused",
    ),
    Q(
        "distractor",
        P,
        "the site returns an invalid certificate error from the CDN after the origin renewal",
        "cdn_origin_cert_hostname",
        distractors="ios_distribution_cert_expired",
    ),
    Q(
        "distractor",
        P,
        "iOS signing certificate expired and the archive won't sign",
        "ios_distribution_cert_expired",
        distractors="cdn_origin_cert_hostname ios_profile_push_entitlement",
    ),
    Q(
        "distractor",
        P,
        "CDN purge calls in the deploy job are being rate limited",
        "cdn_purge_api_rate_limit",
        distractors="deploy_gateway_limit_new_app_version push_campaign_quota_429",
    ),
    Q(
        "distractor",
        P,
        "API gateway rate limiting the mobile app with 429 after the release",
        "deploy_gateway_limit_new_app_version",
        distractors="cdn_purge_api_rate_limit push_campaign_quota_429",
    ),
    Q(
        "distractor",
        P,
        "the feature flag cache on mobile keeps old values",
        "flags_mobile_cache_ttl",
        distractors="android_gradle_cache_corrupt ci_node_modules_cache_key",
    ),
    Q(
        "distractor",
        P,
        "Gradle cache on the Android CI is corrupted",
        "android_gradle_cache_corrupt",
        distractors="ci_node_modules_cache_key flags_mobile_cache_ttl",
    ),
    Q(
        "distractor",
        P,
        "users were logged out when we switched colours in the blue-green deploy",
        "deploy_blue_green_session_key",
        distractors="signin_refresh_token_race",
    ),
    Q(
        "distractor",
        P,
        "the app logs users out randomly when refreshing the session",
        "signin_refresh_token_race",
        distractors="deploy_blue_green_session_key",
    ),
    Q(
        "distractor",
        P,
        "password reset link opens Safari instead of the app",
        "signin_universal_links_aasa",
        distractors="email_reset_suppressed_address",
    ),
    Q(
        "distractor",
        P,
        "password reset emails are not delivered to one user",
        "email_reset_suppressed_address",
        distractors="signin_universal_links_aasa",
    ),
    Q(
        "distractor",
        P,
        "staging build gets production flag values",
        "flags_staging_uses_prod_key",
        distractors="flags_default_on_when_unreachable",
    ),
    Q(
        "distractor",
        P,
        "push worker retries cause duplicate notifications",
        "push_duplicate_on_redelivery",
        distractors="push_campaign_quota_429 push_fcm_legacy_endpoint_removed",
    ),
    Q(
        "distractor",
        P,
        "old JavaScript bundle still served from the CDN after a deploy",
        "cdn_html_cached_old_bundle",
        distractors="web_service_worker_stale_shell",
    ),
    Q(
        "distractor",
        P,
        "service worker keeps the old web app version for returning visitors",
        "web_service_worker_stale_shell",
        distractors="cdn_html_cached_old_bundle",
    ),
    Q(
        "distractor",
        P,
        "Xcode version change on the CI mac runners broke the iOS build",
        "ios_xcode_image_upgrade",
        distractors="ci_mac_runner_queue",
    ),
    Q(
        "distractor",
        P,
        "iOS pipelines queue for an hour waiting for mac runners",
        "ci_mac_runner_queue",
        distractors="ios_xcode_image_upgrade",
    ),
    Q(
        "distractor",
        P,
        "push notification entitlement missing from the provisioning profile",
        "ios_profile_push_entitlement",
        distractors="push_sandbox_device_tokens push_apns_provider_token_stale",
    ),
    Q(
        "distractor",
        PAY,
        "partial refund in JPY rejected as too large",
        "pay_partial_refund_yen_rounding",
        distractors="pay_refund_returned_by_bank",
    ),
    Q(
        "distractor",
        PAY,
        "refund failed after pending because the card was closed",
        "pay_refund_returned_by_bank",
        distractors="pay_partial_refund_yen_rounding",
    ),
    Q(
        "distractor",
        PAY,
        "checkout times out while calculating tax",
        "pay_tax_provider_timeout",
        distractors="pay_double_charge_retry",
    ),
    Q(
        "distractor",
        CARE_,
        "customer can't sign in, locked after wrong passwords, not an email typo",
        "care_account_locked_attempts",
        distractors="care_email_change_typo",
    ),
    # other_scope: the right words, but the lesson is in another project, tenant or agent
    Q(
        "other_scope",
        P,
        "customers were charged twice after the app retried a payment",
        about="pay_double_charge_retry",
    ),
    Q("other_scope", P, "Apple Pay says payment not completed for everyone", about="pay_apple_pay_processing_cert"),
    Q(
        "other_scope",
        P,
        "Google Play subscriptions get refunded after three days, they were never acknowledged",
        about="pay_play_purchases_not_acknowledged",
    ),
    Q("other_scope", P, "chargeback evidence keeps being submitted too late", about="pay_dispute_evidence_late"),
    Q("other_scope", P, "3-D Secure challenge blocked in the in-app webview", about="pay_3ds_challenge_in_webview"),
    Q("other_scope", P, "what's new release notes too long for Google Play", about="bot_release_notes_too_long"),
    Q(
        "other_scope",
        P,
        "staged rollout halted at 5% after crash-free users dropped",
        about="bot_phased_release_halted",
    ),
    Q(
        "other_scope",
        P,
        "App Store screenshots rejected for the 6.9 inch iPhone size",
        about="bot_screenshot_dimensions_rejected",
    ),
    Q(
        "other_scope",
        P,
        "browser push stopped after we regenerated the VAPID keys",
        about="sm_web_push_vapid_regenerated",
    ),
    Q(
        "other_scope",
        P,
        "passkey creation fails because the relying party ID doesn't match the domain",
        about="sm_passkey_rp_id_mismatch",
    ),
    Q(
        "other_scope",
        P,
        "Gmail rate limits our newsletter for missing one-click unsubscribe",
        about="sm_gmail_one_click_unsubscribe",
    ),
    Q(
        "other_scope",
        P,
        "Android cold start is slower since the baseline profile went missing",
        about="sm_android_startup_baseline_profile",
    ),
    Q(
        "other_scope",
        P,
        "customer wants two accounts merged, one of them with an Apple relay email",
        about="care_duplicate_accounts_apple_relay",
    ),
    Q("other_scope", P, "a customer's discount code is rejected in their country", about="care_promo_code_region"),
    Q("other_scope", PAY, "Play Console says our target API level is too low", about="android_target_sdk_too_low"),
    Q("other_scope", PAY, "sign in with Apple returns invalid_client", about="signin_apple_client_secret_expired"),
    Q(
        "other_scope",
        PAY,
        "customer asks for a refund of a subscription bought in the App Store",
        about="care_app_store_refund_request",
    ),
    Q(
        "other_scope",
        CARE_,
        "customer's password reset email is dropped because of the suppression list",
        about="email_reset_suppressed_address",
    ),
    Q("other_scope", CARE_, "user says the login code SMS never arrives in Nigeria", about="signin_sms_codes_late"),
    Q(
        "other_scope",
        CARE_,
        "a customer's refund failed because their bank card was closed",
        about="pay_refund_returned_by_bank",
    ),
    Q("other_scope", CARE_, "customer was charged twice for one order", about="pay_double_charge_retry"),
    Q(
        "other_scope",
        SALT,
        "iOS distribution certificate expired and the archive won't sign",
        about="ios_distribution_cert_expired",
    ),
    Q(
        "other_scope",
        SALT,
        "FCM legacy endpoint returns 404 for Android pushes",
        about="push_fcm_legacy_endpoint_removed",
    ),
    Q(
        "other_scope",
        SALT,
        "feature flag rollout went to 100% because of the rule order",
        about="flags_rule_order_everyone",
    ),
    Q(
        "other_scope",
        SALT,
        "webhook signature verification fails after rotating the secret",
        about="pay_webhook_signature_old_secret",
    ),
    Q(
        "other_scope",
        SALT,
        "magic link emails show as already used because of mail scanners",
        about="signin_magic_link_prefetched",
    ),
    # no_match: requests an engineer might make to the same agent that no lesson covers
    Q("no_match", P, "add a new Android app shortcut for creating a trip"),
    Q("no_match", P, "write the release notes for version 4.23 in English and German"),
    Q("no_match", P, "how many daily active users did the iOS app have last week"),
    Q("no_match", P, "set up a feature flag for the new onboarding screen"),
    Q("no_match", P, "translate the push notification copy for the summer campaign into Spanish"),
    Q("no_match", P, "rename the harbor-android pipeline to android-release"),
    Q("no_match", P, "create a Grafana dashboard for the CDN cache hit ratio"),
    Q("no_match", P, "draft an incident postmortem template for the mobile team"),
    Q("no_match", P, "who is on call for the sign-in service this weekend"),
    Q("no_match", P, "add dark mode colours to the email templates"),
    Q("no_match", P, "upgrade React Native to the latest version in the app"),
    Q("no_match", P, "explain the difference between TCP and UDP for a new hire"),
    Q("no_match", P, "order more USB-C chargers for the test device lab"),
    Q("no_match", PAY, "what is our refund policy for annual plans in the EU"),
    Q("no_match", PAY, "export all June transactions to a CSV for accounting"),
    Q("no_match", PAY, "add iDEAL as a payment method for Dutch customers"),
    Q("no_match", CARE_, "write a friendly reply thanking a customer for their five star review"),
    Q("no_match", CARE_, "how do I change my own signature in the helpdesk tool"),
    Q("no_match", CARE_, "summarize this week's tickets by topic"),
    Q("no_match", P, "book a table for six at an Italian place near the office on Friday"),
    Q("no_match", P, "what's the weather going to be in Lisbon tomorrow"),
    Q("no_match", CARE_, "suggest a name for the team's new cat"),
    Q("no_match", PAY, "convert 72 degrees Fahrenheit to Celsius"),
    Q("no_match", SALT, "write a limerick about a lighthouse keeper"),
    Q("no_match", SALT, "plan a two-day offsite agenda for the platform team"),
    Q("no_match", SALT, "set up a new Slack channel for the design guild"),
]


def corpus() -> dict[str, Any]:
    return build(LESSONS, QUERIES, about=ABOUT, version=VERSION, now=NOW, tool=TOOL)


if __name__ == "__main__":
    sys.exit(main(output=OUTPUT, corpus=corpus, tool=TOOL, doc=__doc__))
