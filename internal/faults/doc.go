// Package faults holds the fault tests that boot two VMs on one virtual
// wire (build tag vmhost) and kill one of them: what the survivor sees,
// how long it takes, and that nothing leaks. doc/failures.md reports what
// they measure. The VMs run the command in faultnode.
package faults
