// SPDX-License-Identifier: GPL-2.0-only
//
// A backend for the reference StatsD server (etsy's statsd, from npm) that
// appends every flush to a file as one JSON line: what StatsD computed
// from soakd's lines (counters, gauges, timer_data with each timer's
// sample count), so export-statsd-etsy.sh checks what a Graphite behind
// StatsD would store.  The file is the config's jsonBackend.path.
"use strict";

const fs = require("fs");

exports.init = function (startupTime, config, events) {
	const path = config.jsonBackend && config.jsonBackend.path;
	if (!path)
		return false;
	events.on("flush", function (timestamp, metrics) {
		const record = {
			timestamp: timestamp,
			counters: metrics.counters,
			gauges: metrics.gauges,
			timer_data: metrics.timer_data,
		};
		fs.appendFileSync(path, JSON.stringify(record) + "\n");
	});
	return true;
};
