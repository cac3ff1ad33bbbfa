package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newReproduceCmd builds 'pltlab reproduce'. Placeholder until its issue lands.
func newReproduceCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "reproduce",
		Short:  "(not built yet)",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("pltlab reproduce is not built yet")
		},
	}
}
