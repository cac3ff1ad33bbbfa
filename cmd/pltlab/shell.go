package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newShellCmd builds 'pltlab shell'. Placeholder until its issue lands.
func newShellCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "shell",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab shell is not built yet")
		},
	}
}
