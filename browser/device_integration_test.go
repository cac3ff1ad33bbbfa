//go:build linux

package browser

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/device"
)

// TestIntegrationDevice loads a page from the real server on an emulated phone: a CPU budget
// for the whole browser tree (motog4, 4x), CDP throttling alone (4x) and the desktop. Each
// launch's calibration must measure the slowdown within the tolerance, the budget must hold
// during the load (the group's CPU time under what the budget allows, the network service
// inside the group), and every record carries its device and its CPU time by process type. A
// budget that the kernel does not apply (the seam skips the quota) must be refused at launch.
func TestIntegrationDevice(t *testing.T) {
	chrome := needChromium(t)
	dir, m := genPage(t, "6x30KB")
	ctx := context.Background()
	srv, ns := startServer(t, dir)
	info := srv.Info()
	pageURL := info.URL("h2")
	u, _ := url.Parse(pageURL)
	port, _ := strconv.Atoi(u.Port())
	launch := func(d device.Device, opts ...Option) (*Browser, error) {
		return Launch(ctx, append([]Option{WithChrome(chrome), WithNetNS(ns), WithProtocol("h2"), WithSPKI(info.SPKI),
			WithResolve(info.Host, "127.0.0.1"), WithPort(port), WithDevice(d)}, opts...)...)
	}
	for _, spec := range []string{"motog4", "motog4:cdp", "desktop"} {
		t.Run(spec, func(t *testing.T) {
			d, err := device.Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			b, err := launch(d)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			rec := mustLoad(t, b, Target{URL: pageURL, Manifest: m, Timeout: 30 * time.Second})
			checkValid(t, rec, "h2", m.Objects)
			if rec.CPU == nil || rec.CPU.TreeMs <= 0 || rec.CPU.HarnessMs <= 0 {
				t.Fatalf("cpu %+v: want the browser's and the harness's CPU time", rec.CPU)
			}
			t.Logf("plt %.0f ms cpu %+v", rec.PLTMs, *rec.CPU)
			if d.IsDesktop() {
				if rec.Device != nil {
					t.Errorf("desktop record carries device %+v", rec.Device)
				}
				return
			}
			dv := rec.Device
			if dv == nil {
				t.Fatal("no device in the record")
			}
			t.Logf("device %+v", *dv)
			if dv.Spec != d.String() || dv.ExpectedSlowdown != 4 || dv.Width != 360 || !dv.Mobile {
				t.Errorf("device %+v: want %s, 4x, 360 px, mobile", dv, d)
			}
			if dv.MeasuredSlowdown < 3 || dv.MeasuredSlowdown > 5 {
				t.Errorf("measured slowdown %.2f, want 4 +- 25 %%", dv.MeasuredSlowdown)
			}
			if d.Budgeted() {
				if !dv.NetworkServiceInBudget || dv.CPUs != 0.25 || dv.QuotaUs != 2500 || dv.PeriodUs != 10000 ||
					!strings.HasPrefix(dv.Mechanism, "cgroup v") {
					t.Errorf("device %+v: want the network service in a 0.25-core budget (2500 of 10000 µs)", dv)
				}
				if rec.CPU.GroupMs <= 0 || rec.CPU.GroupMs > rec.CPU.BudgetMs {
					t.Errorf("group %.1f ms of CPU, budget %.1f ms", rec.CPU.GroupMs, rec.CPU.BudgetMs)
				}
			} else if dv.NetworkServiceInBudget || dv.CPUs != 0 || dv.CDPRate != 4 || !strings.HasPrefix(dv.Mechanism, "cdp") {
				t.Errorf("device %+v: want CDP throttling at 4 without a budget", dv)
			}
		})
	}
	t.Run("budget not applied", func(t *testing.T) {
		skipQuota := func(c *config) {
			c.setBudget = func(*device.Group, float64) (int, int, error) { return device.BasePeriod, -1, nil }
		}
		d, _ := device.Parse("motog4")
		b, err := launch(d, skipQuota)
		if err == nil {
			b.Close()
			t.Fatal("a budget that was never applied passed the launch check")
		}
		if !strings.Contains(err.Error(), "the slowdown did not hold on 2 checks") {
			t.Errorf("error %q: want the slowdown that did not hold", err)
		}
		t.Log(err)
	})
}
