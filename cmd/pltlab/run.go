package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newRunCmd builds 'pltlab run'. Placeholder until its issue lands.
func newRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "run",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab run is not built yet")
		},
	}
}
