"""Secrets found by detect-secrets (Yelp's maintained detector), used plugin by plugin as gate rules.

detect-secrets is built to scan files; a learning is one short text, so its plugins are called directly
(``analyze_string``) instead of through a whole scan: the full scan with its settings, filters and file-type
guessing costs several times more per text and finds nothing more here. Which plugins, and why:

* the vendor-format plugins (AWS, Azure, GitHub, GitLab, Slack, Stripe, OpenAI, JWT, private keys, npm, PyPI,
  SendGrid, Twilio, Discord, Telegram, Mailchimp, Artifactory, Cloudant, IBM, SoftLayer, Square, basic-auth
  URLs) — each value they find is refused;
* ``KeywordDetector`` (``password = …``, ``api_key: "…"``) with its config-file and quoted patterns; its value
  must look like a credential, not a placeholder (`gate_rules.credential_like`): the scan's own filters that
  would do this are not run;
* the two high-entropy plugins (quoted base64 and hex strings above the plugin's entropy limit), except for
  values the text presents as a digest or a public key (``sha512-…`` integrity hashes, ``ssh-ed25519 AAAA…``,
  "SHA-256 of the tarball"), which are public by nature.

``IPPublicDetector`` is left out: a public IP address in a learning ("the DNS server is 1.1.1.1") is not a secret.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from detect_secrets.plugins.base import BasePlugin
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
    HighEntropyStringsPlugin,
)
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    KeywordDetector,
)

from .gate_rule import GateRule

__all__ = ["detect_secrets_rules"]

_VENDOR_PLUGINS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (module, class, needles: one must occur in the lowercased text for the plugin to run)
    ("aws", "AWSKeyDetector", ("akia", "asia", "abia", "acca", "aws")),
    ("azure_storage_key", "AzureStorageKeyDetector", ("accountkey", "azure")),
    ("basic_auth", "BasicAuthDetector", ("://",)),
    ("github_token", "GitHubTokenDetector", ("gh", "github")),
    ("gitlab_token", "GitLabTokenDetector", ("gl",)),
    ("slack", "SlackDetector", ("xox", "hooks.slack")),
    ("stripe", "StripeDetector", ("k_live", "k_test", "stripe")),
    ("openai", "OpenAIDetector", ("sk-",)),
    ("jwt", "JwtTokenDetector", ("eyj",)),
    ("private_key", "PrivateKeyDetector", ("private key", "putty", "begin ")),
    ("npm", "NpmDetector", ("npm",)),
    ("pypi_token", "PypiTokenDetector", ("pypi-",)),
    ("sendgrid", "SendGridDetector", ("sg.",)),
    ("twilio", "TwilioKeyDetector", ("twilio", "sk", "ac")),
    ("discord", "DiscordBotTokenDetector", ("discord", "bot")),
    ("telegram_token", "TelegramBotTokenDetector", (":aa",)),
    ("mailchimp", "MailchimpDetector", ("-us",)),
    ("artifactory", "ArtifactoryDetector", ("akc", "artifactory", "jfrog")),
    ("cloudant", "CloudantDetector", ("cloudant",)),
    ("ibm_cloud_iam", "IbmCloudIamDetector", ("ibm",)),
    ("ibm_cos_hmac", "IbmCosHmacDetector", ("ibm", "cos", "hmac")),
    ("softlayer", "SoftlayerDetector", ("softlayer", "sl")),
    ("square_oauth", "SquareOAuthDetector", ("sq0",)),
)
_DIGEST_CONTEXT = re.compile(
    r"sha-?(?:1|224|256|384|512)|md5|blake2|checksum|digest|integrity|hash|commit|etag|fingerprint|ssh-(?:rsa|ed25519"
    r"|dss)|ecdsa-sha2|public key|pubkey",
    re.IGNORECASE,
)
_KEYWORD_NEEDLES = ("pass", "pwd", "secret", "key", "token", "auth", "contrase", "cred")


def _plugin(module: str, name: str) -> BasePlugin:
    """One plugin of detect-secrets, by module and class name."""
    loaded = __import__(f"detect_secrets.plugins.{module}", fromlist=[name])
    plugin: BasePlugin = getattr(loaded, name)()
    return plugin


def _spans(text: str, values: Iterator[str]) -> Iterator[tuple[int, int]]:
    """Where each value a plugin reports occurs in `text` (plugins report values, not positions)."""
    for value in values:
        if value:
            at = text.find(value)
            if at >= 0:
                yield at, at + len(value)


_DOCUMENTED_EXAMPLE = re.compile(r"EXAMPLE(?:KEY)?\b")


def _vendor_finder(plugin: BasePlugin) -> Callable[[str], tuple[int, int] | None]:
    # The plugin's own patterns, matched here for their position: `analyze_string` yields a capture group
    # ("ghp" of a GitHub token), too little to redact.
    from .gate_rules import credential_like  # gate_rules imports this module's rules

    patterns = tuple(getattr(plugin, "denylist", ()))
    placeholders = isinstance(plugin, BasicAuthDetector)  # "postgres://USER:PASSWORD@localhost" is a template

    def find(text: str) -> tuple[int, int] | None:
        for pattern in patterns:
            for m in pattern.finditer(text):
                if placeholders and m.lastindex and not credential_like(m.group(m.lastindex)):
                    continue
                if _DOCUMENTED_EXAMPLE.search(text, m.start(), m.end() + 16):
                    continue  # a vendor's published sample key (AWS's "AKIAIOSFODNN7EXAMPLE") opens nothing
                start, end = m.span()
                return start, end
        return None

    return find


_ASSIGNMENT = re.compile(r"[:=;!]")


def _keyword_finder() -> Callable[[str], tuple[int, int] | None]:
    from .gate_rules import credential_like  # gate_rules imports this module's rules

    plugin = KeywordDetector()

    def find(text: str) -> tuple[int, int] | None:
        if _ASSIGNMENT.search(text) is None:
            return None  # every pattern of both tables assigns (":", "=", "!==") or ends a quoted value (";")
        for table in (CONFIG_DENYLIST_REGEX_TO_GROUP, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP):
            for start, end in _spans(text, plugin.analyze_string(text, table)):
                if credential_like(text[start:end]):
                    return start, end
        return None

    return find


def _entropy_finder(plugin: HighEntropyStringsPlugin) -> Callable[[str], tuple[int, int] | None]:
    def find(text: str) -> tuple[int, int] | None:
        for start, end in _spans(text, plugin.analyze_string(text)):
            value = text[start:end]
            if plugin.calculate_shannon_entropy(value) <= plugin.entropy_limit:
                continue
            # A digest or public key says so just before it ("sha512-", "SHA-256 is", "ssh-ed25519 ").
            if _DIGEST_CONTEXT.search(text, max(0, start - 40), start) or value.startswith(("sha", "AAAA")):
                continue
            return start, end
        return None

    return find


@functools.cache
def detect_secrets_rules() -> tuple[GateRule, ...]:
    """One gate rule per detect-secrets plugin used (ids ``secret.ds.<plugin>``), in the order above."""
    rules = []
    for module, name, needles in _VENDOR_PLUGINS:
        plugin = _plugin(module, name)
        reason = f"looks like a secret ({plugin.secret_type})"
        rules.append(
            GateRule(
                f"secret.ds.{module}",
                "secret",
                reason,
                "",
                needles=needles,
                hint=True,
                finder=_vendor_finder(plugin),
                detector=f"detect-secrets:{name}",
            )
        )
    rules.append(
        GateRule(
            "secret.ds.keyword",
            "secret",
            "assigns a value to a secret-sounding name",
            "",
            needles=_KEYWORD_NEEDLES,
            hint=True,
            finder=_keyword_finder(),
            detector="detect-secrets:KeywordDetector",
        )
    )
    for plugin_class, rule_id, quote_needles in (
        (Base64HighEntropyString, "secret.ds.base64_entropy", ('"', "'")),
        (HexHighEntropyString, "secret.ds.hex_entropy", ('"', "'")),
    ):
        plugin = plugin_class()
        rules.append(
            GateRule(
                rule_id,
                "secret",
                f"contains a quoted high-entropy string ({plugin.secret_type})",
                "",
                needles=quote_needles,
                hint=True,
                finder=_entropy_finder(plugin),
                detector=f"detect-secrets:{plugin_class.__name__}",
            )
        )
    return tuple(rules)
