package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newLoadCmd builds 'pltlab load'. Placeholder until its issue lands.
func newLoadCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "load",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab load is not built yet")
		},
	}
}
