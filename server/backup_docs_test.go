package server_test

// writeDocsBeforeBackup stores knowledge before a backup and returns the
// check to run on the restored server (extended once documents exist).
func writeDocsBeforeBackup(t interface{ Helper() }, env *testEnv, c *client) func(*testEnv, *client) {
	return func(*testEnv, *client) {}
}
