package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newLinkCmd builds 'pltlab link'. Placeholder until its issue lands.
func newLinkCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "link",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab link is not built yet")
		},
	}
}
