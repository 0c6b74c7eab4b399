// Package rdmatest holds the helpers every integration test uses to find
// its RDMA device and address.
//
// The rule it enforces: on a plain host without RDMA an integration test
// skips, but inside the rxevm VM (which sets RPMA_TEST_REQUIRE_RXE=1) the
// same lack of RDMA fails the test, so that a broken VM or a wrong address
// can never turn the integration tier into a sea of silent skips.
package rdmatest
