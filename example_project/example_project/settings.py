"""Settings of the example project (the `scrapy startproject` template, trimmed)."""

BOT_NAME = "example_project"

SPIDER_MODULES = ["example_project.spiders"]
NEWSPIDER_MODULE = "example_project.spiders"

# Obey robots.txt with scrapy-robots-std: the add-on puts the package's downloader
# middleware in the place of Scrapy's built-in RobotsTxtMiddleware. ROBOTSTXT_OBEY
# stays the on/off switch.
ADDONS = {"scrapy_robots_std.Addon": 0}
ROBOTSTXT_OBEY = True

# Crawl responsibly by identifying yourself. robots.txt groups are matched against
# the product token of this header: "DemoBot".
USER_AGENT = "DemoBot/1.0 (+https://example.invalid/bot)"

# "rfc9309" (the default) or "1994".
ROBOTS_STD_STANDARD = "rfc9309"

# How long an origin's requests may wait for its robots.txt. These are short, for
# the demo; the defaults, better for real sites, are longer: 15 s per attempt,
# 2 retries starting 2 s apart, at most 60 s in all.
ROBOTS_STD_FETCH_TIMEOUT = 3
ROBOTS_STD_FETCH_RETRIES = 1
ROBOTS_STD_RETRY_BACKOFF = 0.5
ROBOTS_STD_MAX_WAIT = 8

# AI usage preferences (Content-Usage, Content-Signal; docs/usage-preferences.md):
# these are use preferences, not access rules, and by default they are only
# exposed (response.meta["robots_std_usage"]). The demo declares what its content is
# for and drops what a site says no to: before sending when robots.txt says no,
# after download when the response's headers do.
ROBOTS_STD_USAGE_PURPOSE = "search"
ROBOTS_STD_USAGE_ENFORCE = "drop"

# Page-level robots directives (X-Robots-Tag, <meta name="robots">;
# docs/usage-preferences.md), obeyed: the links of a nofollow page are not followed,
# and the items of a noindex page are dropped by the package's item pipeline.
ROBOTS_STD_PAGE_DIRECTIVES = "obey"
ITEM_PIPELINES = {"scrapy_robots_std.PageNoindexPipeline": 0}

# An audit record of every robots.txt seen and of the drops per origin (JSON Lines,
# appended; docs/audit.md). Relative to the directory the crawl runs in.
ROBOTS_STD_AUDIT_PATH = "output/robots-audit.jsonl"

# Concurrency and throttling settings
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 1

FEED_EXPORT_ENCODING = "utf-8"
