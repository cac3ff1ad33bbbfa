package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/pltlab/pltlab/pages"
	"github.com/spf13/cobra"
)

// newPagesCmd builds 'pltlab pages': generate a test page directory from a page spec.
func newPagesCmd() *cobra.Command {
	var (
		spec, out, har string
		seed           int64
		force, list    bool
	)
	cmd := &cobra.Command{
		Use:   "pages (--spec SPEC --out DIR | --from-har FILE [--out DIR]) [--seed N] [--force] | --list",
		Short: "Generate a test page (exact-size typed objects, index.html, manifest.json)",
		Long: `pages writes a test page into DIR: index.html (minimal HTML5 whose only subresources are the
objects), the objects (img/0001.jpg ...: decodable baseline JPEGs of exactly the requested sizes,
padded with seeded pseudo-random comment segments; css/, js/, font/, fetch/, iframe/ for the other
types) and manifest.json (spec, seed, and each object's path, size, sha256, type, origin host and,
for images, dimensions). The same spec and seed give identical bytes.

SPEC is a preset name (see --list) or comma-separated [COUNTx]SIZE[:TYPE][@ORIGIN] items, e.g.
10x30KB,2x200KB,1x1MiB or 1x20KB:css,2x50KB:js,1x40KB:font,10x30KB,3x5KB:fetch-chain@o1,1x8KB:iframe@o2.
COUNT defaults to 1. Units: B, KB or kB (1000), KiB (1024), MB (10^6), MiB (2^20); sizes ` + fmt.Sprint(pages.MinObjectSize) + `B
(images) to 50MB per object, at most 10000 objects and 1 GB per page. TYPE (default img): img, css
(stylesheet in the head), js (parser-blocking script in the head), js-body (at the end of the
body), js-async, js-defer, font (TrueType font of an @font-face used by visible text), fetch (JSON
fetched by the page's script), fetch-chain (COUNT JSON documents, each fetched when the one before
has arrived: depth COUNT), iframe (an HTML document in an iframe; "2x3KB:iframe@o1(2x5KB,1x1KB:css)"
gives iframes that each hold their own images, stylesheets or scripts). ORIGIN (default: the
page's) is a label such as o1: the objects are served from o1.PAGEID.plt.test by the same server.

DIR must be absent, empty, or hold the page of the same spec and seed; --force replaces another
page (a directory holding a manifest.json pltlab wrote and that page's files only) but never a
directory of other files, nor one whose manifest.json is another program's. The page is written
beside DIR and renamed into place, so an error or Ctrl-C leaves nothing half-written.

--from-har FILE derives the spec from a HAR 1.2 file of one page load (Chrome DevTools' export or
the load.har of 'run --artifacts'): every entry with a 2xx status besides the main document
becomes an object, its type from _resourceType (else the MIME type), its size from
response.bodySize (content.size when bodySize is -1 or 0), each other host an origin o1, o2, ...
in order of first appearance; a fetch that a fetch issued continues its chain (fetch-chain), an
iframe holds the images, stylesheets and scripts it requested on its own host. It
prints the spec on stdout (reuse it with 'run --page SPEC') and on stderr what the page does not
reproduce (redirects, failed entries, unknown types, clamped sizes, depth lost, cookies,
async/defer, scripts' behaviour, iframe contents); with --out it writes the page, exactly the one
--spec SPEC gives, and DIR/` + fromHARFile + ` (spec, counts per type and origin, what was not
reproduced, with counts and reasons).`,
		Example: `  ./bin/pltlab pages --spec 10x30KB,1x1MB --out /tmp/page
  ./bin/pltlab pages --spec carlucci2015 --seed 7 --out /tmp/carlucci --force
  ./bin/pltlab pages --spec 1x20KB:css,2x50KB:js,1x40KB:font,10x30KB,3x5KB:fetch-chain@o1,1x8KB:iframe@o2 --out /tmp/mix
  ./bin/pltlab pages --from-har /tmp/load.har --out /tmp/fromhar
  ./bin/pltlab pages --list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				return writePresets(cmd.OutOrStdout())
			}
			if har != "" {
				if spec != "" {
					return usagef("--spec and --from-har given; accepted: one of them (--from-har derives the spec)")
				}
				return pageFromHAR(cmd, har, out, seed, force)
			}
			return generatePage(cmd, spec, out, seed, force)
		},
	}
	f := cmd.Flags()
	f.StringVar(&spec, "spec", "", "page spec: a preset name or [COUNTx]SIZE[:TYPE][@ORIGIN] items like 10x30KB,2x200KB,1x20KB:css")
	f.StringVar(&out, "out", "", "directory to write the page into (optional with --from-har)")
	f.StringVar(&har, "from-har", "", "derive the page spec from this HAR file of a page load")
	f.Int64Var(&seed, "seed", pages.DefaultSeed, "generator seed: the same spec and seed give identical bytes")
	f.BoolVar(&force, "force", false, "replace an existing page directory")
	f.BoolVar(&list, "list", false, "list the page presets and exit")
	return cmd
}

// generatePage parses the spec and writes the page, mapping bad input to usage errors (exit 2).
func generatePage(cmd *cobra.Command, specText, out string, seed int64, force bool) error {
	if specText == "" {
		return usagef("missing --spec (or --from-har FILE); accepted: a preset name (see 'pltlab pages --list') or [COUNTx]SIZE[:TYPE][@ORIGIN] items like 10x30KB,2x200KB,1x20KB:css")
	}
	spec, err := pages.ParseSpec(specText)
	if err != nil {
		return usagef("bad --spec: %v", err)
	}
	if out == "" {
		return usagef("missing --out DIR: the directory to write the page into")
	}
	m, err := pages.GenerateContext(cmd.Context(), out, spec, seed, pages.WithReplace(force))
	if errors.Is(err, pages.ErrOutDir) {
		return usagef("bad --out: %v", err)
	}
	if err != nil {
		return fmt.Errorf("generate page %s: %w", spec.Label(), err)
	}
	noun := "objects"
	if len(m.Objects) == 1 {
		noun = "object"
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote page %s: %d %s, %d bytes (%s) in %s\n",
		m.Spec, len(m.Objects), noun, m.TotalBytes, pages.HumanBytes(m.TotalBytes), out)
	return err
}

// fromHARFile is the file written beside a page derived from a HAR (in its directory): the
// HAR's path, the seed and the pages.HARShape.
const fromHARFile = pages.FromHARFile

// pageFromHAR derives a page spec from the HAR file har, prints it and what it does not
// reproduce, and with out writes the page and its fromHARFile. Bad input is a usage error.
func pageFromHAR(cmd *cobra.Command, har, out string, seed int64, force bool) error {
	h, err := pages.ReadHAR(har)
	if err != nil && !errors.Is(err, pages.ErrNotHAR) {
		return usagef("bad --from-har %s: %v; accepted: a HAR 1.2 file of one page load", har, errors.Unwrap(err))
	}
	var shape *pages.HARShape
	if err == nil {
		shape, err = h.Shape()
	}
	if err != nil {
		return usagef("bad --from-har %s: %v", har, err)
	}
	var wrote string
	if out != "" {
		if wrote, err = writeFromHAR(cmd, shape, har, out, seed, force); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(cmd.OutOrStdout(), shape.Spec+wrote); err != nil {
		return err
	}
	return shape.Report(cmd.ErrOrStderr(), har)
}

// writeFromHAR writes the page of shape into out and its fromHARFile, and returns the lines
// that say so (each starting with a newline).
func writeFromHAR(cmd *cobra.Command, shape *pages.HARShape, har, out string, seed int64, force bool) (string, error) {
	// fromHARFile is written with the page, so that they are renamed into place together.
	m, err := pages.GenerateContext(cmd.Context(), out, shape.PageSpec(), seed, pages.WithReplace(force),
		pages.WithFile(fromHARFile, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				HAR  string `json:"har"`
				Seed int64  `json:"seed"`
				*pages.HARShape
			}{har, seed, shape})
		}))
	if errors.Is(err, pages.ErrOutDir) {
		return "", usagef("bad --out: %v", err)
	}
	if err != nil {
		return "", fmt.Errorf("generate page %s: %w", shape.Spec, err)
	}
	path := filepath.Join(out, fromHARFile)
	return fmt.Sprintf("\nwrote page %s: %d objects, %d bytes (%s) in %s\nwrote %s",
		m.Items, len(m.Objects), m.TotalBytes, pages.HumanBytes(m.TotalBytes), out, path), nil
}

// writePresets prints the presets as a table: name, objects, total size, items.
func writePresets(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tOBJECTS\tTOTAL\tSPEC")
	for _, p := range pages.Presets() {
		s, err := pages.ParseSpec(p.Spec)
		if err != nil {
			return fmt.Errorf("preset %s: %w", p.Name, err)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.Name, s.Objects(), pages.HumanBytes(s.TotalBytes()), p.Spec)
	}
	return tw.Flush()
}
