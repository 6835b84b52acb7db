/*
 * Linked into the test programs of sanitizer builds only: Open MPI unloads
 * its components at MPI_Finalize, after which LeakSanitizer cannot name the
 * module of their allocations and suppressions (lsan.supp) cannot match
 * them. Keeping every shared object loaded keeps the reports symbolized.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
  (void)handle;
  return 0;
}
