"""Usage preferences, whatever states them: what content may be used for.

A robots.txt's ``Content-Usage`` / ``Content-Signal`` lines, the same response
headers, page-level robots directives (``noai``) and TDMRep each give
:class:`~scrapy_robots_std.usage.preferences.UsageSource` statements, combined into
one :class:`~scrapy_robots_std.usage.preferences.UsagePreferences`.  Pure: no
Scrapy, no Twisted, and nothing from ``robotstxt/``, which imports this package
(docs/design.md).
"""
