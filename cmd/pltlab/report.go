package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newReportCmd builds 'pltlab report'. Placeholder until its issue lands.
func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "report",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab report is not built yet")
		},
	}
}
