"""Settings of the example project (the `scrapy startproject` template, trimmed)."""

BOT_NAME = "example_project"

SPIDER_MODULES = ["example_project.spiders"]
NEWSPIDER_MODULE = "example_project.spiders"

# robots.txt checks use the product token of this header: "DemoBot".
USER_AGENT = "DemoBot/1.0 (+https://example.com/demobot)"

# Obey robots.txt rules, with this package's parser behind Scrapy's built-in
# RobotsTxtMiddleware.
#
# For now this project uses the RobotParser backend only. Once the package's own
# middleware and add-on are in place, the one-line form will replace the two lines
# below (it swaps in the package's middleware, which also explains every drop):
#
#     ADDONS = {"scrapy_robots_std.Addon": 0}
ROBOTSTXT_OBEY = True
ROBOTSTXT_PARSER = "scrapy_robots_std.StdRobotParser"

# "rfc9309" (the default) or "1994".
ROBOTS_STD_STANDARD = "rfc9309"

# Crawl responsibly.
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 1

FEED_EXPORT_ENCODING = "utf-8"
