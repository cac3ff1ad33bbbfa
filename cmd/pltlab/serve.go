package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newServeCmd builds 'pltlab serve'. Placeholder until its issue lands.
func newServeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "serve",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab serve is not built yet")
		},
	}
}
