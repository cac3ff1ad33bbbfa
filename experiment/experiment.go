// Package experiment runs a matrix of page loads (pages x links x protocols x modes x runs) and streams records.
package experiment
