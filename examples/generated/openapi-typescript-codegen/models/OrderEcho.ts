/* generated using openapi-typescript-codegen -- do not edit */
/* istanbul ignore file */
/* tslint:disable */
/* eslint-disable */
import type { NewOrder } from './NewOrder';
export type OrderEcho = {
  method: string;
  path: string;
  user: string;
  body: NewOrder;
};

