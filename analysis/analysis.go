// Package analysis turns result records into statistics, comparison tables, plots and reports.
package analysis
