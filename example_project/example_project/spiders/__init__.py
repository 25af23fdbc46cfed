# This package will contain the spiders of your Scrapy project.
