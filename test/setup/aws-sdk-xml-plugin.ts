/**
 * @aws-sdk/client-s3 (bucket-drop tests and bench) resolves its browser build in workerd, whose XML
 * parser needs DOMParser, which workerd lacks: this points it at the SDK's own plain-JS parser.
 */
export const awsSdkXmlParser = {
  name: "aws-sdk-xml-parser",
  enforce: "pre" as const,
  resolveId(source: string, importer?: string) {
    if (importer?.includes("@aws-sdk/xml-builder") && /\/xml-parser(\.browser)?(\.js)?$/.test(source)) {
      return `${importer.slice(0, importer.lastIndexOf("/") + 1)}xml-parser.js`;
    }
    return null;
  },
};
