package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newPagesCmd builds 'pltlab pages'. Placeholder until its issue lands.
func newPagesCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "pages",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab pages is not built yet")
		},
	}
}
