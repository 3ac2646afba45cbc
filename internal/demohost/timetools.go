package demohost

import (
	"context"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zone names resolve without a system zoneinfo database

	"github.com/tooldex/tooldex/toolhost"
)

// loadZone resolves an IANA zone name. It refuses "Local": the host's own
// zone is not the caller's business and differs between hosts.
func loadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "local") {
		return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\"", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as \"Europe/Paris\", \"America/New_York\" or \"UTC\"", name)
	}
	return loc, nil
}

// describeTime is the answer of both time tools.
func describeTime(t time.Time, zone string) map[string]any {
	_, offset := t.Zone()
	return map[string]any{
		"time":       t.Format(time.RFC3339),
		"zone":       zone,
		"weekday":    t.Weekday().String(),
		"utc_offset": formatOffset(offset),
		"unix":       t.Unix(),
	}
}

func formatOffset(seconds int) string {
	sign := '+'
	if seconds < 0 {
		sign = '-'
		seconds = -seconds
	}
	return fmt.Sprintf("%c%02d:%02d", sign, seconds/3600, seconds/60%60)
}

// timeNow is the handler of time_now.
func timeNow(_ context.Context, call *toolhost.Call) (*toolhost.Result, error) {
	return timeNowAt(time.Now(), call)
}

// timeNowAt is time_now with now given, for tests.
func timeNowAt(now time.Time, call *toolhost.Call) (*toolhost.Result, error) {
	zone, err := stringParam(call.Params, "zone", "UTC")
	if err != nil {
		return toolhost.Errorf("%v", err), nil
	}
	loc, err := loadZone(zone)
	if err != nil {
		return toolhost.Errorf("%v", err), nil
	}
	return toolhost.JSON(describeTime(now.In(loc), loc.String()))
}

// timeConvert is the handler of time_convert.
func timeConvert(_ context.Context, call *toolhost.Call) (*toolhost.Result, error) {
	in, err := stringParam(call.Params, "time", "")
	if err != nil {
		return toolhost.Errorf("%v", err), nil
	}
	if in == "" {
		return toolhost.Errorf("time is required, e.g. \"2025-03-01T09:30:00+01:00\""), nil
	}
	zone, err := stringParam(call.Params, "to_zone", "")
	if err != nil {
		return toolhost.Errorf("%v", err), nil
	}
	if strings.TrimSpace(zone) == "" {
		return toolhost.Errorf("to_zone is required, e.g. \"Asia/Tokyo\""), nil
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(in))
	if err != nil {
		return toolhost.Errorf("time %q is not RFC 3339 (e.g. \"2025-03-01T09:30:00+01:00\" or \"2025-03-01T08:30:00Z\")", in), nil
	}
	loc, err := loadZone(zone)
	if err != nil {
		return toolhost.Errorf("%v", err), nil
	}
	out := describeTime(t.In(loc), loc.String())
	out["from"] = t.Format(time.RFC3339)
	return toolhost.JSON(out)
}
