// Byte sizes, for memory budgets and file sizes in tests.
export const KiB = 2 ** 10;
export const MiB = 2 ** 20;
export const GiB = 2 ** 30;
